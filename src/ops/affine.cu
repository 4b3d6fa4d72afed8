// SPDX-License-Identifier: Apache-2.0
#include "streampipe/cuda/launch.hpp"
#include "streampipe/ops/affine.hpp"

#include <cstdint>

namespace streampipe::ops {
namespace {

// float4 loads and stores when both pointers are 16-byte aligned; scalar tail.
__global__ void affine_kernel(const float* __restrict__ x, float* __restrict__ y, std::size_t n,
                              float a, float b, bool vector_ok) {
  const std::size_t stride = std::size_t{gridDim.x} * blockDim.x;
  const std::size_t first = std::size_t{blockIdx.x} * blockDim.x + threadIdx.x;
  const std::size_t n4 = vector_ok ? n / 4 : 0;
  for (std::size_t i = first; i < n4; i += stride) {
    float4 v = reinterpret_cast<const float4*>(x)[i];
    v.x = fmaf(a, v.x, b);
    v.y = fmaf(a, v.y, b);
    v.z = fmaf(a, v.z, b);
    v.w = fmaf(a, v.w, b);
    reinterpret_cast<float4*>(y)[i] = v;
  }
  for (std::size_t i = n4 * 4 + first; i < n; i += stride) y[i] = fmaf(a, x[i], b);
}

}  // namespace

void affine(StreamRef stream, const float* x, float* y, std::size_t n, float a, float b) {
  if (n == 0) return;
  const bool vector_ok =
      reinterpret_cast<std::uintptr_t>(x) % 16 == 0 && reinterpret_cast<std::uintptr_t>(y) % 16 == 0;
  const auto cfg = LaunchConfig::for_elements(stream.device(), (n + 3) / 4, 256, 1, 8);
  launch(stream, cfg, affine_kernel, x, y, n, a, b, vector_ok);
}

}  // namespace streampipe::ops
