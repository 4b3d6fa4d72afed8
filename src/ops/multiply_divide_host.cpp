// SPDX-License-Identifier: Apache-2.0
#include "streampipe/ops/multiply_divide.hpp"

#include <stdexcept>

namespace streampipe::ops {

void multiply_divide_host(std::span<const float> in, std::span<float> out, int repeats) {
  if (in.size() != out.size()) throw std::invalid_argument("multiply_divide_host: size mismatch");
  for (std::size_t i = 0; i < in.size(); ++i) {
    // volatile keeps the compiler from folding x*2/2 under any flags: the host backend must
    // do the work it claims to time.
    volatile float x = in[i];
    for (int r = 0; r < repeats; ++r) {
      x = x * 2.0f;
      x = x / 2.0f;
    }
    out[i] = x;
  }
}

}  // namespace streampipe::ops
