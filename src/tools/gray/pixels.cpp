// SPDX-License-Identifier: Apache-2.0
// Decoded images of every layout -> the gray tool's staged luma or 8-bit RGB (see
// tools/gray/pixels.hpp).

#include "streampipe/tools/gray/pixels.hpp"

#include "streampipe/ops/rgb_to_gray.hpp"

#include <fmt/format.h>

#include <cstring>
#include <stdexcept>

namespace streampipe::tools::gray {
namespace {

// Same rounding as libpng's strip_16 scaling: round(v * 255 / 65535).
std::uint8_t to_8bit(std::uint16_t v) noexcept {
  return static_cast<std::uint8_t>((static_cast<std::uint32_t>(v) * 255u + 32767u) / 65535u);
}

// Each pixel's first `out_channels` samples (gray's one replicated when the image has one or
// two), made 8-bit by to8.
template <typename Sample, typename To8>
void expand(const io::Image& image, std::span<std::uint8_t> out, std::size_t out_channels, To8 to8) {
  const std::size_t pixels = static_cast<std::size_t>(image.width) * image.height;
  const auto channels = static_cast<std::size_t>(image.channels);
  const auto* src = reinterpret_cast<const Sample*>(image.pixels.data());
  std::uint8_t* dst = out.data();
  for (std::size_t p = 0; p < pixels; ++p, src += channels, dst += out_channels) {
    if (channels <= 2) {  // gray, gray+alpha
      for (std::size_t c = 0; c < out_channels; ++c) dst[c] = to8(src[0]);
    } else {              // RGB, RGBA
      for (std::size_t c = 0; c < out_channels; ++c) dst[c] = to8(src[c]);
    }
  }
}

void check_size(const char* what, std::size_t given, std::size_t need, const io::Image& image) {
  if (given != need)
    throw std::invalid_argument(fmt::format("{}: {} bytes given for a {}x{} image ({} needed)", what, given,
                                            image.width, image.height, need));
}

// The image with `out_channels` 8-bit channels (1: its gray, 3: RGB) into `out`.
void to_8bit_channels(const io::Image& image, std::span<std::uint8_t> out, std::size_t out_channels) {
  if (image.bit_depth == 8 && static_cast<std::size_t>(image.channels) == out_channels) {
    std::memcpy(out.data(), image.pixels.data(), out.size());
  } else if (image.bit_depth == 8) {
    expand<std::uint8_t>(image, out, out_channels, [](std::uint8_t v) { return v; });
  } else {
    expand<std::uint16_t>(image, out, out_channels, to_8bit);
  }
}

}  // namespace

const char* to_string(Staged staged) noexcept { return staged == Staged::luma ? "luma" : "rgb"; }

Staged staged_as(const io::Image& image) {
  image.validate();
  return image.channels <= 2 ? Staged::luma : Staged::rgb;
}

std::size_t staged_bytes(const io::Image& image) {
  const std::size_t pixels = static_cast<std::size_t>(image.width) * image.height;
  return staged_as(image) == Staged::luma ? pixels : pixels * 3;
}

void stage(const io::Image& image, std::span<std::uint8_t> out) {
  const std::size_t need = staged_bytes(image);
  check_size("stage", out.size(), need, image);
  to_8bit_channels(image, out, staged_as(image) == Staged::luma ? 1 : 3);
}

std::size_t rgb8_bytes(const io::Image& image) {
  image.validate();
  return static_cast<std::size_t>(image.width) * image.height * 3;
}

void to_rgb8(const io::Image& image, std::span<std::uint8_t> rgb) {
  check_size("to_rgb8", rgb.size(), rgb8_bytes(image), image);
  to_8bit_channels(image, rgb, 3);
}

std::vector<std::uint8_t> gray8(const io::Image& image) {
  std::vector<std::uint8_t> staged(staged_bytes(image));
  stage(image, staged);
  if (staged_as(image) == Staged::luma) return staged;
  std::vector<std::uint8_t> gray(staged.size() / 3);
  ops::rgb_to_gray_host(staged, gray);
  return gray;
}

}  // namespace streampipe::tools::gray
