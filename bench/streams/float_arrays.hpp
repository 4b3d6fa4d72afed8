// SPDX-License-Identifier: Apache-2.0
#pragma once
// The arrays of the arrays experiments: N arrays of 1M random float32, pageable and (with a
// GPU) pinned copies of them, and pinned and pageable outputs to poison and check. Their
// kernels compute x * 2 / 2, which is x for these floats: the reference is the input itself.

#include "streams/experiments.hpp"

#include "streampipe/cuda/device_buffer.hpp"
#include "streampipe/cuda/pinned_pool.hpp"

#include <cstddef>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

namespace streampipe::bench::streams {

struct FloatArrays {
  static constexpr std::size_t kElems = std::size_t{1} << 20, kBytes = kElems * 4;
  std::vector<std::vector<float>> in, out;
  std::vector<PinnedBlock> pin_in, pin_out;  // empty without a GPU

  // `n` arrays, array i from seed `seed + i`.
  FloatArrays(std::size_t n, unsigned seed, bool pinned) : in(n), out(n) {
    for (std::size_t i = 0; i < n; ++i) {
      in[i] = random_values<float>(kElems, static_cast<unsigned>(seed + i));
      out[i].resize(kElems);
      if (!pinned) continue;
      pin_in.push_back(PinnedPool::global().acquire(kBytes));
      std::memcpy(pin_in.back().data(), in[i].data(), kBytes);
      pin_out.push_back(PinnedPool::global().acquire(kBytes));
    }
  }
  [[nodiscard]] std::size_t size() const noexcept { return in.size(); }

  void poison_pageable() {
    for (auto& o : out) std::memset(o.data(), 0xff, kBytes);
  }
  [[nodiscard]] bool pageable_right() const {
    for (std::size_t i = 0; i < in.size(); ++i)
      if (std::memcmp(out[i].data(), in[i].data(), kBytes) != 0) return false;
    return true;
  }
  void poison_pinned() {
    for (auto& o : pin_out) std::memset(o.data(), 0xff, kBytes);
  }
  [[nodiscard]] bool pinned_right() const {
    for (std::size_t i = 0; i < pin_out.size(); ++i)
      if (std::memcmp(pin_out[i].data(), in[i].data(), kBytes) != 0) return false;
    return true;
  }
};

// The peer a user writes by hand: a stream per array, each array's pinned input copied in,
// `launch`ed on its stream (in, out, elements), copied back, every stream waited for; a row
// of `name`, marked as a peer.
using ArrayLaunch = std::function<void(StreamRef, const float* in, float* out, std::size_t n)>;
[[nodiscard]] inline Row stream_per_array_row(const Config& c, const Device& dev, FloatArrays& arrays,
                                              const std::string& name, const ArrayLaunch& launch) {
  const std::size_t n = arrays.size();
  std::vector<Stream> streams;
  std::vector<DeviceBuffer<float>> d_in, d_out;
  for (std::size_t i = 0; i < n; ++i) {
    streams.emplace_back(dev);
    d_in.emplace_back(dev, FloatArrays::kElems);
    d_out.emplace_back(dev, FloatArrays::kElems);
  }
  Row row = timed_row(name, c.warmup, c.runs, [&] { arrays.poison_pinned(); }, [&] {
    for (std::size_t i = 0; i < n; ++i) {
      const auto s = streams[i].ref();
      SP_CUDA_CHECK(cudaMemcpyAsync(d_in[i].data(), arrays.pin_in[i].data(), FloatArrays::kBytes,
                                    cudaMemcpyHostToDevice, s.handle()));
      launch(s, d_in[i].data(), d_out[i].data(), FloatArrays::kElems);
      SP_CUDA_CHECK(cudaMemcpyAsync(arrays.pin_out[i].data(), d_out[i].data(), FloatArrays::kBytes,
                                    cudaMemcpyDeviceToHost, s.handle()));
    }
    for (auto& s : streams) s.synchronize();
  }, [&] { return arrays.pinned_right(); });
  row.peer = true;
  return row;
}

}  // namespace streampipe::bench::streams
