// SPDX-License-Identifier: Apache-2.0
#include "streampipe/cuda/aggregate_bandwidth.hpp"

#include "streampipe/cuda/device_buffer.hpp"
#include "streampipe/cuda/error.hpp"
#include "streampipe/cuda/pinned_pool.hpp"
#include "streampipe/cuda/stream.hpp"

#include <algorithm>
#include <array>
#include <barrier>
#include <chrono>
#include <cstring>
#include <exception>
#include <limits>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <thread>

namespace streampipe {
namespace {

using Clock = std::chrono::steady_clock;

enum Path { h2d, d2h, both, kPaths };

// One device's share: everything it copies with, allocated before the threads start.
struct Lane {
  explicit Lane(const Device& d, std::size_t n)
      : device(d), d_a(d, n), d_b(d, n), h_a(PinnedPool::global().acquire(n)),
        h_b(PinnedPool::global().acquire(n)), s1(d), s2(d) {
    // Real data on every page: zero pages can be special-cased.
    for (std::size_t i = 0; i < n; ++i) h_a.data()[i] = static_cast<std::byte>(i * 131u + 7u);
    std::memset(h_b.data(), 0x5a, n);
  }
  Device device;
  DeviceBuffer<std::byte> d_a, d_b;
  PinnedBlock h_a, h_b;
  Stream s1, s2;
  // Per path and run: when this lane's copies began and ended.
  std::array<std::vector<std::pair<Clock::time_point, Clock::time_point>>, kPaths> times;
};

void copy_once(Lane& lane, Path path, std::size_t n) {
  const cudaStream_t s1 = lane.s1.handle(), s2 = lane.s2.handle();
  if (path == h2d || path == both)
    SP_CUDA_CHECK(cudaMemcpyAsync(lane.d_a.data(), lane.h_a.data(), n, cudaMemcpyHostToDevice, s1));
  if (path == d2h)
    SP_CUDA_CHECK(cudaMemcpyAsync(lane.h_b.data(), lane.d_a.data(), n, cudaMemcpyDeviceToHost, s1));
  // Both directions: the device-to-host copy on the second stream, so that the two copy
  // engines run at once (as measure_link's bidirectional figure).
  if (path == both)
    SP_CUDA_CHECK(cudaMemcpyAsync(lane.h_b.data(), lane.d_b.data(), n, cudaMemcpyDeviceToHost, s2));
  lane.s1.synchronize();
  if (path == both) lane.s2.synchronize();
}

}  // namespace

double AggregateBandwidth::gbps(const std::string& path) const {
  for (const auto& f : figures)
    if (f.path == path) return f.median_gbps;
  return 0.0;
}

AggregateBandwidth measure_aggregate(std::span<const Device> devices, const BandwidthOptions& o) {
  if (devices.empty()) throw std::invalid_argument("measure_aggregate: no devices");
  const std::size_t n = o.bytes;
  const int runs = std::max(1, o.runs);
  const int warmup = std::max(0, o.warmup);
  AggregateBandwidth result;
  std::vector<std::unique_ptr<Lane>> lanes;
  for (const Device& d : devices) {
    const CurrentDeviceGuard guard(d);
    result.devices.push_back(d.index());
    lanes.push_back(std::make_unique<Lane>(d, n));
  }

  // One phase per run of every path: no lane starts a run before every lane finished the
  // previous one, so that each run is all devices copying at once.
  std::barrier start(static_cast<std::ptrdiff_t>(lanes.size()));
  std::mutex failure_mutex;
  std::exception_ptr failure;
  const auto work = [&](Lane& lane) {
    try {
      const CurrentDeviceGuard guard(lane.device);
      for (int p = 0; p < kPaths; ++p)
        for (int r = 0; r < warmup + runs; ++r) {
          start.arrive_and_wait();
          const auto begin = Clock::now();
          copy_once(lane, static_cast<Path>(p), n);
          if (r >= warmup) lane.times[p].emplace_back(begin, Clock::now());
        }
    } catch (...) {
      {
        const std::lock_guard lock(failure_mutex);
        if (!failure) failure = std::current_exception();
      }
      start.arrive_and_drop();  // the others finish their runs without this lane
    }
  };
  {
    std::vector<std::jthread> threads;
    for (std::size_t i = 1; i < lanes.size(); ++i) threads.emplace_back(work, std::ref(*lanes[i]));
    work(*lanes[0]);
  }
  if (failure) std::rethrow_exception(failure);

  const std::array<const char*, kPaths> paths{"aggregate_h2d", "aggregate_d2h", "aggregate_bidirectional"};
  const std::array<const char*, kPaths> labels{"all at once, pinned host -> device", "all at once, pinned device -> host",
                                               "all at once, both directions (total)"};
  for (int p = 0; p < kPaths; ++p) {
    std::vector<double> ms;
    for (int r = 0; r < runs; ++r) {
      auto first = Clock::time_point::max();
      auto last = Clock::time_point::min();
      for (const auto& lane : lanes) {
        first = std::min(first, lane->times[p][r].first);
        last = std::max(last, lane->times[p][r].second);
      }
      ms.push_back(std::chrono::duration<double, std::milli>(last - first).count());
    }
    const std::size_t bytes = n * lanes.size() * (p == both ? 2 : 1);
    result.figures.push_back(figure_from_runs(paths[p], labels[p], bytes, ms));
  }
  return result;
}

}  // namespace streampipe
