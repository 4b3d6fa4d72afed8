// SPDX-License-Identifier: Apache-2.0
// Decoded images of every layout -> 8-bit RGB for the luma kernel (see tools/gray/pixels.hpp).

#include "streampipe/tools/gray/pixels.hpp"

#include <fmt/format.h>

#include <cstring>
#include <stdexcept>

namespace streampipe::tools::gray {
namespace {

// Same rounding as libpng's strip_16 scaling: round(v * 255 / 65535).
std::uint8_t to_8bit(std::uint16_t v) noexcept {
  return static_cast<std::uint8_t>((static_cast<std::uint32_t>(v) * 255u + 32767u) / 65535u);
}

template <typename Sample, typename To8>
void expand(const io::Image& image, std::span<std::uint8_t> rgb, To8 to8) {
  const std::size_t pixels = static_cast<std::size_t>(image.width) * image.height;
  const auto channels = static_cast<std::size_t>(image.channels);
  const auto* src = reinterpret_cast<const Sample*>(image.pixels.data());
  std::uint8_t* dst = rgb.data();
  for (std::size_t p = 0; p < pixels; ++p, src += channels, dst += 3) {
    if (channels <= 2) {  // gray, gray+alpha
      dst[0] = dst[1] = dst[2] = to8(src[0]);
    } else {              // RGB, RGBA
      dst[0] = to8(src[0]);
      dst[1] = to8(src[1]);
      dst[2] = to8(src[2]);
    }
  }
}

}  // namespace

std::size_t rgb8_bytes(const io::Image& image) {
  image.validate();
  return static_cast<std::size_t>(image.width) * image.height * 3;
}

void to_rgb8(const io::Image& image, std::span<std::uint8_t> rgb) {
  const std::size_t need = rgb8_bytes(image);
  if (rgb.size() != need)
    throw std::invalid_argument(fmt::format("to_rgb8: {} bytes given for a {}x{} image ({} needed)", rgb.size(),
                                            image.width, image.height, need));
  if (image.bit_depth == 8 && image.channels == 3) {
    std::memcpy(rgb.data(), image.pixels.data(), need);
  } else if (image.bit_depth == 8) {
    expand<std::uint8_t>(image, rgb, [](std::uint8_t v) { return v; });
  } else {
    expand<std::uint16_t>(image, rgb, to_8bit);
  }
}

}  // namespace streampipe::tools::gray
