// SPDX-License-Identifier: Apache-2.0
#pragma once
// Sample images for the image I/O tests: random pixels (exact formats must round-trip them)
// and smooth content (JPEG's error stays small, so a loose comparison still means something).

#include "streampipe/io/image.hpp"

#include <cstdint>
#include <random>

namespace streampipe::io {

inline Image random_image(std::uint32_t w, std::uint32_t h, int channels, int depth, unsigned seed) {
  Image img = Image::make(w, h, channels, depth);
  std::mt19937 rng(seed);
  for (auto& b : img.pixels) b = static_cast<std::uint8_t>(rng());
  return img;
}

// Smooth content so that JPEG's error stays small and the check stays meaningful.
inline Image smooth_image(std::uint32_t w, std::uint32_t h, int channels) {
  Image img = Image::make(w, h, channels);
  for (std::uint32_t y = 0; y < h; ++y)
    for (std::uint32_t x = 0; x < w; ++x)
      for (int c = 0; c < channels; ++c)
        img.pixels[(std::size_t{y} * w + x) * static_cast<std::size_t>(channels) + static_cast<std::size_t>(c)] =
            static_cast<std::uint8_t>(30 + x * 100 / w + y * 60 / h + static_cast<unsigned>(c) * 20);
  return img;
}

}  // namespace streampipe::io
