// SPDX-License-Identifier: Apache-2.0
#include "mlp_convert.cuh"

#include "streampipe/cuda/launch.hpp"

#include <cuda_bf16.h>

#include <cstdint>
#include <stdexcept>

namespace streampipe::serving::detail {
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

// Row kernels: a block converts kRowSpan floats of one row (grid.y = row). Mapped rows come
// over the link, where every load waits a round trip: each thread has both of its 16-byte
// loads in flight before it uses the first. Reading rows through the table costs nothing
// measurable against the element-wise kernel on one contiguous block (docs/batching.md,
// "Mapped I/O", has the figures).
constexpr unsigned kRowThreads = 256;
constexpr unsigned kRowVectors = 2;
constexpr unsigned kRowSpan = kRowThreads * kRowVectors * 4;

__device__ bool aligned16(const void* p) { return reinterpret_cast<std::uintptr_t>(p) % 16 == 0; }

__global__ void rows_to_bf16_kernel(const float* const* __restrict__ rows, __nv_bfloat16* __restrict__ out,
                                    unsigned cols) {
  const float* src = rows[blockIdx.y];
  __nv_bfloat16* dst = out + std::size_t{blockIdx.y} * cols;
  const unsigned first = blockIdx.x * kRowSpan, end = min(first + kRowSpan, cols);
  if (src != nullptr && cols % 4 == 0 && aligned16(src)) {
    float4 v[kRowVectors];
#pragma unroll
    for (unsigned k = 0; k < kRowVectors; ++k) {
      const unsigned c = first + (k * kRowThreads + threadIdx.x) * 4;
      if (c < end) v[k] = *reinterpret_cast<const float4*>(src + c);
    }
#pragma unroll
    for (unsigned k = 0; k < kRowVectors; ++k) {
      const unsigned c = first + (k * kRowThreads + threadIdx.x) * 4;
      if (c < end) {
        const __nv_bfloat162 lo = __floats2bfloat162_rn(v[k].x, v[k].y), hi = __floats2bfloat162_rn(v[k].z, v[k].w);
        __nv_bfloat162* d = reinterpret_cast<__nv_bfloat162*>(dst + c);
        d[0] = lo;
        d[1] = hi;
      }
    }
    return;
  }
  for (unsigned c = first + threadIdx.x; c < end; c += kRowThreads)
    dst[c] = __float2bfloat16_rn(src != nullptr ? src[c] : 0.0f);  // a null row is padding: zeros
}

__global__ void bf16_to_rows_kernel(const __nv_bfloat16* __restrict__ in, float* const* __restrict__ rows,
                                    unsigned cols) {
  float* dst = rows[blockIdx.y];
  if (dst == nullptr) return;  // padding: never written
  const __nv_bfloat16* src = in + std::size_t{blockIdx.y} * cols;
  const unsigned first = blockIdx.x * kRowSpan, end = min(first + kRowSpan, cols);
  if (cols % 4 == 0 && aligned16(dst)) {
#pragma unroll
    for (unsigned k = 0; k < kRowVectors; ++k) {
      const unsigned c = first + (k * kRowThreads + threadIdx.x) * 4;
      if (c < end) {
        const __nv_bfloat162* s2 = reinterpret_cast<const __nv_bfloat162*>(src + c);
        const float2 lo = __bfloat1622float2(s2[0]), hi = __bfloat1622float2(s2[1]);
        *reinterpret_cast<float4*>(dst + c) = float4{lo.x, lo.y, hi.x, hi.y};
      }
    }
    return;
  }
  for (unsigned c = first + threadIdx.x; c < end; c += kRowThreads) dst[c] = __bfloat162float(src[c]);
}

LaunchConfig row_config(std::size_t rows, std::size_t cols) {
  if (cols > 0xffffffffu) throw std::invalid_argument("MLP rows of more than 2^32 values");
  LaunchConfig cfg;
  cfg.grid = dim3(static_cast<unsigned>((cols + kRowSpan - 1) / kRowSpan), static_cast<unsigned>(rows), 1);
  cfg.block = dim3(kRowThreads, 1, 1);
  return cfg;
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

void rows_to_bf16(StreamRef stream, const float* const* in_rows, std::uint16_t* out, std::size_t rows,
                  std::size_t cols) {
  if (rows == 0 || cols == 0) return;
  launch(stream, row_config(rows, cols), rows_to_bf16_kernel, in_rows, reinterpret_cast<__nv_bfloat16*>(out),
         static_cast<unsigned>(cols));
}

void bf16_to_rows(StreamRef stream, const std::uint16_t* in, float* const* out_rows, std::size_t rows,
                  std::size_t cols) {
  if (rows == 0 || cols == 0) return;
  launch(stream, row_config(rows, cols), bf16_to_rows_kernel, reinterpret_cast<const __nv_bfloat16*>(in), out_rows,
         static_cast<unsigned>(cols));
}

}  // namespace streampipe::serving::detail
