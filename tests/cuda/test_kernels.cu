// SPDX-License-Identifier: Apache-2.0
// Kernels used by the launch tests (compiled by nvcc; the tests themselves are host code).
#include "test_kernels.hpp"

namespace streampipe::testing {

__global__ void fill_index(int* out, std::size_t n, int offset) {
  const std::size_t i = std::size_t{blockIdx.x} * blockDim.x + threadIdx.x;
  if (i < n) out[i] = static_cast<int>(i) + offset;
}

__global__ void needs_shared(int* out) {
  extern __shared__ int scratch[];
  scratch[threadIdx.x] = static_cast<int>(threadIdx.x);
  __syncthreads();
  out[threadIdx.x] = scratch[blockDim.x - 1 - threadIdx.x];
}

FillIndexKernel fill_index_kernel() { return fill_index; }
NeedsSharedKernel needs_shared_kernel() { return needs_shared; }

}  // namespace streampipe::testing
