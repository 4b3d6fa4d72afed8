// SPDX-License-Identifier: Apache-2.0
#pragma once
// Interleaved 8-bit RGB to 8-bit luma with BT.601 weights, in the fixed-point form OpenCV's
// cvtColor(RGB2GRAY) uses: Y = (4899 R + 9617 G + 1868 B + 8192) >> 14 (weights 0.299,
// 0.587, 0.114 scaled by 2^14, rounded half up). GPU and CPU give identical results.

#include "streampipe/cuda/stream.hpp"

#include <cstddef>
#include <cstdint>
#include <span>

namespace streampipe::ops {

constexpr std::uint8_t luma_bt601(std::uint8_t r, std::uint8_t g, std::uint8_t b) noexcept {
  return static_cast<std::uint8_t>((4899u * r + 9617u * g + 1868u * b + 8192u) >> 14);
}

void rgb_to_gray(StreamRef stream, const std::uint8_t* rgb, std::uint8_t* gray, std::size_t pixels);
void rgb_to_gray_host(std::span<const std::uint8_t> rgb, std::span<std::uint8_t> gray);

}  // namespace streampipe::ops
