// SPDX-License-Identifier: Apache-2.0
#include "streampipe/ops/affine.hpp"

#include <cmath>
#include <stdexcept>

namespace streampipe::ops {

void affine_host(std::span<const float> x, std::span<float> y, float a, float b) {
  if (x.size() != y.size()) throw std::invalid_argument("affine_host: size mismatch");
  // std::fma matches the device's fmaf bit for bit.
  for (std::size_t i = 0; i < x.size(); ++i) y[i] = std::fma(a, x[i], b);
}

}  // namespace streampipe::ops
