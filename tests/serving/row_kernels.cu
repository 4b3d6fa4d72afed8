// SPDX-License-Identifier: Apache-2.0
#include "row_kernels.hpp"

#include "streampipe/cuda/launch.hpp"

namespace streampipe::serving::test_support {
namespace {

__global__ void rotate_rows_kernel(const float* const* in_rows, float* const* out_rows, std::size_t rows,
                                   std::size_t width) {
  float* dst = out_rows[blockIdx.x];
  if (dst == nullptr) return;
  const float* src = in_rows[(blockIdx.x + 1) % rows];
  for (std::size_t c = threadIdx.x; c < width; c += blockDim.x) dst[c] = src != nullptr ? src[c] : 0.0f;
}

}  // namespace

void rotate_rows(StreamRef stream, const float* const* in_rows, float* const* out_rows, std::size_t rows,
                 std::size_t width) {
  LaunchConfig cfg;
  cfg.grid = dim3(static_cast<unsigned>(rows), 1, 1);
  cfg.block = dim3(32, 1, 1);
  launch(stream, cfg, rotate_rows_kernel, in_rows, out_rows, rows, width);
}

}  // namespace streampipe::serving::test_support
