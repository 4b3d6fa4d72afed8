// SPDX-License-Identifier: Apache-2.0
#include "streampipe/io/decode_limits.hpp"

#include "streampipe/io/image.hpp"

#include <fmt/format.h>

namespace streampipe::io {

bool DecodeLimits::allows(std::uint64_t width, std::uint64_t height) const noexcept {
  if (max_pixels == 0) return true;
  // width, height < 2^32: the product fits in 64 bits.
  return width * height <= max_pixels;
}

void DecodeLimits::check(std::uint64_t width, std::uint64_t height, const std::string& source) const {
  if (allows(width, height)) return;
  throw ImageError(source, fmt::format("{}x{} image ({} pixels) exceeds the limit of {} pixels; {} to read it",
                                       width, height, width * height, max_pixels, raise_hint));
}

}  // namespace streampipe::io
