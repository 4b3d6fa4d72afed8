#include "streampipe/cuda/launch.hpp"
#include "streampipe/ops/multiply_divide.hpp"

#include <stdexcept>

namespace streampipe::ops {
namespace {

__device__ __forceinline__ float churn(float x, int repeats) {
  for (int r = 0; r < repeats; ++r) {
    x = x * 2.0f;
    x = x / 2.0f;
  }
  return x;
}

__global__ void multiply_divide_kernel(const float* __restrict__ in, float* __restrict__ out,
                                       std::size_t n, int repeats) {
  const std::size_t stride = std::size_t{gridDim.x} * blockDim.x;
  for (std::size_t i = std::size_t{blockIdx.x} * blockDim.x + threadIdx.x; i < n; i += stride)
    out[i] = churn(in[i], repeats);
}

__global__ void multiply_divide_batched_kernel(const float* __restrict__ in, float* __restrict__ out,
                                               std::size_t n, std::size_t array_stride, int repeats) {
  const std::size_t base = std::size_t{blockIdx.x} * array_stride;
  for (std::size_t i = threadIdx.x; i < n; i += blockDim.x)
    out[base + i] = churn(in[base + i], repeats);
}

}  // namespace

void multiply_divide(StreamRef stream, const float* in, float* out, std::size_t n,
                     const MultiplyDivideShape& shape) {
  if (n == 0) return;
  LaunchConfig cfg;
  cfg.grid = dim3(shape.blocks);
  cfg.block = dim3(shape.threads);
  launch(stream, cfg, multiply_divide_kernel, in, out, n, shape.repeats);
}

void multiply_divide_batched(StreamRef stream, const float* in, float* out, std::size_t n,
                             std::size_t stride, std::size_t arrays, const MultiplyDivideShape& shape) {
  if (n == 0 || arrays == 0) return;
  if (stride < n) throw std::invalid_argument("multiply_divide_batched: stride smaller than the array");
  LaunchConfig cfg;
  cfg.grid = dim3(static_cast<unsigned>(arrays));
  cfg.block = dim3(shape.threads);
  launch(stream, cfg, multiply_divide_batched_kernel, in, out, n, stride, shape.repeats);
}

}  // namespace streampipe::ops
