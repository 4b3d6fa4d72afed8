// SPDX-License-Identifier: Apache-2.0
#pragma once
// What the gray tool feeds the GPU: every decoded image becomes interleaved 8-bit RGB, so one
// kernel (ops::rgb_to_gray) serves every input variant.
//   - 16-bit samples become 8-bit as round(v * 255 / 65535) (libpng's strip_16 rounding);
//   - alpha is dropped, not composited (OpenCV's RGBA2GRAY does the same);
//   - gray (and gray+alpha) is replicated to R = G = B, which the BT.601 fixed-point luma maps
//     back to the same value exactly, so a gray input gives an identical gray output.

#include "streampipe/io/image.hpp"

#include <cstddef>
#include <cstdint>
#include <span>

namespace streampipe::tools::gray {

// width * height * 3; throws std::invalid_argument for an invalid image.
[[nodiscard]] std::size_t rgb8_bytes(const io::Image& image);

// Writes the image as 8-bit RGB into `rgb`, which must hold exactly rgb8_bytes(image).
void to_rgb8(const io::Image& image, std::span<std::uint8_t> rgb);

}  // namespace streampipe::tools::gray
