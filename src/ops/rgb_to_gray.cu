// SPDX-License-Identifier: Apache-2.0
#include "streampipe/cuda/launch.hpp"
#include "streampipe/ops/rgb_to_gray.hpp"

namespace streampipe::ops {
namespace {

// Four pixels per thread: three aligned 32-bit loads in, one 32-bit store out, when the
// buffers allow it; the tail and unaligned buffers take the byte path.
__global__ void rgb_to_gray_kernel(const std::uint8_t* __restrict__ rgb, std::uint8_t* __restrict__ gray,
                                   std::size_t pixels, bool vector_ok) {
  const std::size_t stride = std::size_t{gridDim.x} * blockDim.x;
  const std::size_t quads = vector_ok ? pixels / 4 : 0;
  for (std::size_t q = std::size_t{blockIdx.x} * blockDim.x + threadIdx.x; q < quads; q += stride) {
    const auto* src = reinterpret_cast<const unsigned*>(rgb) + 3 * q;
    const unsigned w0 = src[0], w1 = src[1], w2 = src[2];
    const unsigned char b[12] = {
        static_cast<unsigned char>(w0), static_cast<unsigned char>(w0 >> 8),
        static_cast<unsigned char>(w0 >> 16), static_cast<unsigned char>(w0 >> 24),
        static_cast<unsigned char>(w1), static_cast<unsigned char>(w1 >> 8),
        static_cast<unsigned char>(w1 >> 16), static_cast<unsigned char>(w1 >> 24),
        static_cast<unsigned char>(w2), static_cast<unsigned char>(w2 >> 8),
        static_cast<unsigned char>(w2 >> 16), static_cast<unsigned char>(w2 >> 24)};
    unsigned out = 0;
#pragma unroll
    for (int p = 0; p < 4; ++p)
      out |= static_cast<unsigned>(luma_bt601(b[3 * p], b[3 * p + 1], b[3 * p + 2])) << (8 * p);
    reinterpret_cast<unsigned*>(gray)[q] = out;
  }
  for (std::size_t i = quads * 4 + std::size_t{blockIdx.x} * blockDim.x + threadIdx.x; i < pixels; i += stride)
    gray[i] = luma_bt601(rgb[3 * i], rgb[3 * i + 1], rgb[3 * i + 2]);
}

}  // namespace

void rgb_to_gray(StreamRef stream, const std::uint8_t* rgb, std::uint8_t* gray, std::size_t pixels) {
  if (pixels == 0) return;
  const bool vector_ok = reinterpret_cast<std::uintptr_t>(rgb) % 4 == 0 &&
                         reinterpret_cast<std::uintptr_t>(gray) % 4 == 0;
  const auto cfg = LaunchConfig::for_elements(stream.device(), (pixels + 3) / 4, 256, 1, 8);
  launch(stream, cfg, rgb_to_gray_kernel, rgb, gray, pixels, vector_ok);
}

}  // namespace streampipe::ops
