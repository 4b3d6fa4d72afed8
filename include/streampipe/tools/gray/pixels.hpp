// SPDX-License-Identifier: Apache-2.0
#pragma once
// What the gray tool feeds the lanes: a decoded image staged either as its gray values (one
// byte a pixel, which the lanes copy) or as interleaved 8-bit RGB (three, whose BT.601 luma
// the lanes compute with ops::rgb_to_gray), so that one operation serves every input variant.
//   - gray and gray+alpha images, a JPEG's Y plane decoded alone among them (io's jpeg_luma),
//     are staged as luma: the BT.601 fixed-point luma maps (v, v, v) back to v exactly, so
//     this gives the bytes their RGB would, without making it;
//   - RGB and RGBA images are staged as RGB;
//   - 16-bit samples become 8-bit as round(v * 255 / 65535) (libpng's strip_16 rounding);
//   - alpha is dropped, not composited (OpenCV's RGBA2GRAY does the same).

#include "streampipe/io/image.hpp"

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace streampipe::tools::gray {

enum class Staged { luma, rgb };

// "luma" or "rgb": FileResult::decoded_to's words.
[[nodiscard]] const char* to_string(Staged staged) noexcept;

// luma for 1 or 2 channels, rgb for 3 or 4; throws std::invalid_argument for an invalid image.
[[nodiscard]] Staged staged_as(const io::Image& image);
// The bytes stage() writes: width * height, times 3 for rgb.
[[nodiscard]] std::size_t staged_bytes(const io::Image& image);
// Writes the image as staged_as() says into `out`, which must hold exactly staged_bytes(image)
// (std::invalid_argument otherwise).
void stage(const io::Image& image, std::span<std::uint8_t> out);

// width * height * 3; throws std::invalid_argument for an invalid image.
[[nodiscard]] std::size_t rgb8_bytes(const io::Image& image);

// Writes the image as 8-bit RGB into `rgb`, which must hold exactly rgb8_bytes(image); gray
// is replicated to R = G = B.
void to_rgb8(const io::Image& image, std::span<std::uint8_t> rgb);

// The gray image of a decoded image, on this thread: its staged luma, or the BT.601 luma of
// its RGB (what the lanes would make of stage()'s bytes).
[[nodiscard]] std::vector<std::uint8_t> gray8(const io::Image& image);

}  // namespace streampipe::tools::gray
