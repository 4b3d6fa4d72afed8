// SPDX-License-Identifier: Apache-2.0
#pragma once
// JPEG files of the kinds a decoder must tell apart, made at test time from libjpeg-turbo's
// baseline output by editing its markers (only the headers are read from the edited files).

#include "streampipe/io/image.hpp"

#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <random>
#include <vector>

namespace streampipe::io::testing {

inline std::vector<std::byte> baseline_jpeg(std::uint32_t w, std::uint32_t h, int channels, unsigned seed,
                                            int quality = 90) {
  Image img = Image::make(w, h, channels, 8);
  std::mt19937 rng(seed);
  for (auto& b : img.pixels) b = static_cast<std::uint8_t>(rng());
  return encode_jpeg(img, quality);
}

inline std::size_t find_marker(const std::vector<std::byte>& d, unsigned marker) {
  for (std::size_t i = 0; i + 1 < d.size(); ++i)
    if (d[i] == std::byte{0xFF} && d[i + 1] == static_cast<std::byte>(marker)) return i;
  ADD_FAILURE() << "marker " << marker << " not found";
  return 0;
}

// The same file with its SOF0 frame marker replaced (C2 progressive, C3 lossless, ...).
inline std::vector<std::byte> with_sof(std::vector<std::byte> d, unsigned sof) {
  d[find_marker(d, 0xC0) + 1] = static_cast<std::byte>(sof);
  return d;
}

inline std::vector<std::byte> with_precision(std::vector<std::byte> d, unsigned bits) {
  d[find_marker(d, 0xC0) + 4] = static_cast<std::byte>(bits);
  return d;
}

// An Adobe APP14 segment with the given colour transform inserted after SOI.
inline std::vector<std::byte> with_adobe(std::vector<std::byte> d, unsigned transform) {
  const unsigned char app14[] = {0xFF, 0xEE, 0x00, 0x0E, 'A', 'd', 'o', 'b', 'e', 0x00, 0x64,
                                 0x00, 0x00, 0x00, 0x00, static_cast<unsigned char>(transform)};
  std::vector<std::byte> seg(sizeof app14);
  for (std::size_t i = 0; i < seg.size(); ++i) seg[i] = static_cast<std::byte>(app14[i]);
  d.insert(d.begin() + 2, seg.begin(), seg.end());
  return d;
}

// Without its JFIF APP0 segment (libjpeg writes it right after SOI).
inline std::vector<std::byte> without_jfif(std::vector<std::byte> d) {
  EXPECT_EQ(d[3], std::byte{0xE0});
  const std::size_t length = (std::to_integer<std::size_t>(d[4]) << 8) | std::to_integer<std::size_t>(d[5]);
  d.erase(d.begin() + 2, d.begin() + 2 + 2 + static_cast<std::ptrdiff_t>(length));
  return d;
}

// The three components renamed 'R', 'G', 'B'.
inline std::vector<std::byte> with_rgb_ids(std::vector<std::byte> d) {
  const std::size_t sof = find_marker(d, 0xC0);
  d[sof + 10] = std::byte{'R'};
  d[sof + 13] = std::byte{'G'};
  d[sof + 16] = std::byte{'B'};
  return d;
}

// The file cut well inside its entropy-coded data.
inline std::vector<std::byte> truncated(std::vector<std::byte> d) {
  const std::size_t sos = find_marker(d, 0xDA);
  d.resize(sos + (d.size() - sos) / 2);
  return d;
}

}  // namespace streampipe::io::testing
