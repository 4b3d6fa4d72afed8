// SPDX-License-Identifier: Apache-2.0
#pragma once
// Private to src/tools/mandelbrot: the escape-count iteration shared by host and device, written so
// that both round every operation separately (the device through __dmul_rn/__dadd_rn and
// friends, the host compiled with -ffp-contract=off).

#include <cstdint>

#if defined(__CUDACC__)
#define SP_MB_HD __host__ __device__ __forceinline__
#else
#define SP_MB_HD inline
#endif

namespace streampipe::tools::mandelbrot::detail {

template <typename T>
SP_MB_HD T mul(T a, T b) {
#if defined(__CUDA_ARCH__)
  if constexpr (sizeof(T) == 8) return __dmul_rn(a, b); else return __fmul_rn(a, b);
#else
  return a * b;
#endif
}

template <typename T>
SP_MB_HD T add(T a, T b) {
#if defined(__CUDA_ARCH__)
  if constexpr (sizeof(T) == 8) return __dadd_rn(a, b); else return __fadd_rn(a, b);
#else
  return a + b;
#endif
}

// IEEE 754 defines a - b as a + (-b), rounded once: the same bits as __dsub_rn/__fsub_rn.
template <typename T>
SP_MB_HD T sub(T a, T b) {
  return add(a, -b);
}

// c is computed in double for both precisions, then rounded to T.
SP_MB_HD double pixel_coordinate(double origin, double step, std::uint32_t index) {
  return add(origin, mul(add(static_cast<double>(index), 0.5), step));
}

template <typename T>
SP_MB_HD std::uint32_t escape_count(T cx, T cy, std::uint32_t max_iterations) {
  T zx = 0, zy = 0;
  for (std::uint32_t i = 0; i < max_iterations; ++i) {
    const T x2 = mul(zx, zx), y2 = mul(zy, zy);
    if (add(x2, y2) > T(4)) return i;
    zy = add(mul(add(zx, zx), zy), cy);
    zx = add(sub(x2, y2), cx);
  }
  return max_iterations;
}

}  // namespace streampipe::tools::mandelbrot::detail
