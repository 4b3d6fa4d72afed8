// SPDX-License-Identifier: Apache-2.0
// An independent link probe written the plain way (no streampipe code): cudaMemcpyAsync
// between pinned host memory and the device, timed with events, median of N runs after
// warm-up (and the best run). `streampipe info` must agree with it within 5%.
//   memcpy_probe [MiB=256] [runs=9]  -> one JSON object on stdout
#include "plain_cuda.hpp"

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <utility>
#include <vector>

int main(int argc, char** argv) {
  const size_t mib = argc > 1 ? std::strtoul(argv[1], nullptr, 10) : 256;
  const int runs = argc > 2 ? std::atoi(argv[2]) : 9;
  const size_t n = mib << 20;
  void *h_a, *h_b, *d_a, *d_b;
  CHECK(cudaMallocHost(&h_a, n));
  CHECK(cudaMallocHost(&h_b, n));
  CHECK(cudaMalloc(&d_a, n));
  CHECK(cudaMalloc(&d_b, n));
  std::memset(h_a, 0x3c, n);
  std::memset(h_b, 0x5a, n);
  cudaStream_t s1, s2;
  CHECK(cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking));
  CHECK(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking));
  cudaEvent_t start, stop, fork, join;
  CHECK(cudaEventCreate(&start));
  CHECK(cudaEventCreate(&stop));
  CHECK(cudaEventCreateWithFlags(&fork, cudaEventDisableTiming));
  CHECK(cudaEventCreateWithFlags(&join, cudaEventDisableTiming));

  auto measure = [&](int kind) {
    std::vector<float> ms;
    for (int i = 0; i < runs + 2; ++i) {
      CHECK(cudaEventRecord(start, s1));
      if (kind == 0) CHECK(cudaMemcpyAsync(d_a, h_a, n, cudaMemcpyHostToDevice, s1));
      if (kind == 1) CHECK(cudaMemcpyAsync(h_b, d_a, n, cudaMemcpyDeviceToHost, s1));
      if (kind == 2) {
        CHECK(cudaEventRecord(fork, s1));
        CHECK(cudaStreamWaitEvent(s2, fork, 0));
        CHECK(cudaMemcpyAsync(d_a, h_a, n, cudaMemcpyHostToDevice, s1));
        CHECK(cudaMemcpyAsync(h_b, d_b, n, cudaMemcpyDeviceToHost, s2));
        CHECK(cudaEventRecord(join, s2));
        CHECK(cudaStreamWaitEvent(s1, join, 0));
      }
      CHECK(cudaEventRecord(stop, s1));
      CHECK(cudaEventSynchronize(stop));
      float t = 0;
      CHECK(cudaEventElapsedTime(&t, start, stop));
      if (i >= 2) ms.push_back(t);
    }
    std::sort(ms.begin(), ms.end());
    const double bytes = kind == 2 ? 2.0 * n : double(n);
    return std::make_pair(bytes / (ms[ms.size() / 2] * 1e-3) / 1e9, bytes / (ms.front() * 1e-3) / 1e9);
  };
  const auto h2d = measure(0), d2h = measure(1), both = measure(2);
  cudaDeviceProp p;
  CHECK(cudaGetDeviceProperties(&p, 0));
  std::printf("{\"device\": \"%s\", \"mib\": %zu, \"runs\": %d, \"pinned_h2d\": %.2f, "
              "\"pinned_d2h\": %.2f, \"bidirectional\": %.2f, \"peak\": {\"pinned_h2d\": %.2f, "
              "\"pinned_d2h\": %.2f, \"bidirectional\": %.2f}}\n",
              p.name, mib, runs, h2d.first, d2h.first, both.first, h2d.second, d2h.second, both.second);
  return 0;
}
