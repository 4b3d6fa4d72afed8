// SPDX-License-Identifier: Apache-2.0
#pragma once
// Host <-> device arrays for the jit GPU tests: uploads that leave no stale bytes to pass for
// results, downloads, random inputs, and a kernel cache that never touches the disk.

#include "streampipe/cuda/device.hpp"
#include "streampipe/cuda/device_buffer.hpp"
#include "streampipe/cuda/error.hpp"
#include "streampipe/jit/module_cache.hpp"

#include <cstddef>
#include <random>
#include <vector>

namespace streampipe::jit::test_support {

// `h` at element `pad` of a new buffer whose other bytes are 0xff. Synchronizes the device:
// from pageable memory cudaMemcpy may return before its last DMA lands, and the tests'
// kernels run on non-blocking streams, which do not wait for the legacy stream.
template <typename T>
DeviceBuffer<T> upload(const Device& gpu, const std::vector<T>& h, std::size_t pad = 0) {
  DeviceBuffer<T> d(gpu, h.size() + pad);
  SP_CUDA_CHECK(cudaMemset(d.data(), 0xff, d.bytes()));
  if (!h.empty()) SP_CUDA_CHECK(cudaMemcpy(d.data() + pad, h.data(), h.size() * sizeof(T), cudaMemcpyHostToDevice));
  SP_CUDA_CHECK(cudaDeviceSynchronize());
  return d;
}

template <typename T>
std::vector<T> download(const T* d, std::size_t n) {
  std::vector<T> h(n);
  if (n > 0) SP_CUDA_CHECK(cudaMemcpy(h.data(), d, n * sizeof(T), cudaMemcpyDeviceToHost));
  return h;
}

template <typename T>
std::vector<T> download(const DeviceBuffer<T>& d) {
  return download(d.data(), d.size());
}

// So that a kernel writing nothing cannot pass for one writing the right values.
template <typename T>
void poison(const DeviceBuffer<T>& d) {
  SP_CUDA_CHECK(cudaMemset(d.data(), 0xff, d.bytes()));
}

inline std::vector<float> random_floats(std::size_t n, unsigned seed, float lo = -1.0f, float hi = 1.0f) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(n);
  for (auto& x : v) x = dist(rng);
  return v;
}

inline CacheOptions memory_only() {
  CacheOptions o;
  o.disk = false;
  return o;
}

}  // namespace streampipe::jit::test_support
