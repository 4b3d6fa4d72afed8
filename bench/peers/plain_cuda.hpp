// SPDX-License-Identifier: Apache-2.0
#pragma once
// What the probes in bench/peers share, written the plain way a user would (they never link
// streampipe): a CUDA call that fails ends the program naming the call, and a host clock.
#include <cuda_runtime.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>

#define CHECK(x)                                                                                        \
  do {                                                                                                  \
    cudaError_t err_ = (x);                                                                             \
    if (err_ != cudaSuccess) {                                                                          \
      std::fprintf(stderr, "%s failed: %s (%s:%d)\n", #x, cudaGetErrorString(err_), __FILE__, __LINE__); \
      std::exit(1);                                                                                     \
    }                                                                                                   \
  } while (0)

// Milliseconds on the host's steady clock.
inline double now_ms() {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch()).count();
}
