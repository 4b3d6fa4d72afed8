// SPDX-License-Identifier: Apache-2.0
#include "streampipe/ops/rgb_to_gray.hpp"

#include <stdexcept>

namespace streampipe::ops {

void rgb_to_gray_host(std::span<const std::uint8_t> rgb, std::span<std::uint8_t> gray) {
  if (rgb.size() != 3 * gray.size()) throw std::invalid_argument("rgb_to_gray_host: need 3 bytes per pixel");
  for (std::size_t i = 0; i < gray.size(); ++i)
    gray[i] = luma_bt601(rgb[3 * i], rgb[3 * i + 1], rgb[3 * i + 2]);
}

}  // namespace streampipe::ops
