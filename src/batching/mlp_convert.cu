#include "mlp_convert.cuh"

#include "streampipe/cuda/launch.hpp"

#include <cuda_bf16.h>

namespace streampipe::batching::detail {
namespace {

__global__ void float_to_bf16_kernel(const float* __restrict__ in, __nv_bfloat16* __restrict__ out, std::size_t n) {
  const std::size_t stride = std::size_t{gridDim.x} * blockDim.x;
  for (std::size_t i = std::size_t{blockIdx.x} * blockDim.x + threadIdx.x; i < n; i += stride)
    out[i] = __float2bfloat16_rn(in[i]);
}

__global__ void bf16_to_float_kernel(const __nv_bfloat16* __restrict__ in, float* __restrict__ out, std::size_t n) {
  const std::size_t stride = std::size_t{gridDim.x} * blockDim.x;
  for (std::size_t i = std::size_t{blockIdx.x} * blockDim.x + threadIdx.x; i < n; i += stride)
    out[i] = __bfloat162float(in[i]);
}

__global__ void fill_bf16_pattern_kernel(__nv_bfloat16* __restrict__ out, std::size_t n, float scale, unsigned seed) {
  const std::size_t stride = std::size_t{gridDim.x} * blockDim.x;
  for (std::size_t i = std::size_t{blockIdx.x} * blockDim.x + threadIdx.x; i < n; i += stride) {
    unsigned h = static_cast<unsigned>(i) * 2654435761u ^ seed;
    h ^= h >> 15;
    h *= 2246822519u;
    h ^= h >> 13;
    const float u = static_cast<float>(h % 2001u) / 1000.0f - 1.0f;  // [-1, 1]
    out[i] = __float2bfloat16_rn((u == 0.0f ? 0.5f : u) * scale);
  }
}

}  // namespace

void fill_bf16_pattern(StreamRef stream, std::uint16_t* out, std::size_t n, float scale, unsigned seed) {
  if (n == 0) return;
  const auto cfg = LaunchConfig::for_elements(stream.device(), n, 256, 4, 8);
  launch(stream, cfg, fill_bf16_pattern_kernel, reinterpret_cast<__nv_bfloat16*>(out), n, scale, seed);
}

void float_to_bf16(StreamRef stream, const float* in, std::uint16_t* out, std::size_t n) {
  if (n == 0) return;
  const auto cfg = LaunchConfig::for_elements(stream.device(), n, 256, 4, 8);
  launch(stream, cfg, float_to_bf16_kernel, in, reinterpret_cast<__nv_bfloat16*>(out), n);
}

void bf16_to_float(StreamRef stream, const std::uint16_t* in, float* out, std::size_t n) {
  if (n == 0) return;
  const auto cfg = LaunchConfig::for_elements(stream.device(), n, 256, 4, 8);
  launch(stream, cfg, bf16_to_float_kernel, reinterpret_cast<const __nv_bfloat16*>(in), out, n);
}

}  // namespace streampipe::batching::detail
