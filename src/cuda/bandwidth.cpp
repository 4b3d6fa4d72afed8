// SPDX-License-Identifier: Apache-2.0
#include "streampipe/cuda/bandwidth.hpp"

#include "streampipe/cuda/device_buffer.hpp"
#include "streampipe/cuda/event.hpp"
#include "streampipe/cuda/pinned_pool.hpp"
#include "streampipe/report/statistics.hpp"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <functional>
#include <map>
#include <mutex>
#include <vector>

namespace streampipe {
namespace {

// Runs `body` between two events on `stream`, returning the ms of each timed run. Warm-up
// lasts at least `warmup` runs and at least kMinWarmup of wall time: an idle GPU and its
// link take a while to reach full clocks, and a count alone does not cover that.
std::vector<double> time_runs(const Device& device, StreamRef stream, int warmup, int runs,
                              const std::function<void()>& body) {
  constexpr auto kMinWarmup = std::chrono::milliseconds(200);
  Event start(device);
  Event stop(device);
  const auto once = [&] {
    start.record(stream);
    body();
    stop.record(stream);
    stop.synchronize();
    return elapsed(start, stop).count();
  };
  const auto warm_until = std::chrono::steady_clock::now() + kMinWarmup;
  for (int i = 0; i < warmup || (warmup > 0 && std::chrono::steady_clock::now() < warm_until); ++i)
    (void)once();
  std::vector<double> ms;
  for (int i = 0; i < runs; ++i) ms.push_back(once());
  return ms;
}

}  // namespace

BandwidthFigure figure_from_runs(std::string path, std::string label, std::size_t bytes,
                                 const std::vector<double>& ms) {
  const report::Summary s = report::summarize(ms);
  const auto gbps = [&](double t) { return static_cast<double>(bytes) / (t * 1e-3) / 1e9; };
  BandwidthFigure f;
  f.path = std::move(path);
  f.label = std::move(label);
  f.bytes = bytes;
  f.median_gbps = gbps(s.median);
  f.max_gbps = gbps(s.min);  // the fastest time is the highest rate
  f.min_gbps = gbps(s.max);
  return f;
}

double LinkLimits::gbps(const std::string& path) const {
  for (const auto& f : figures)
    if (f.path == path) return f.median_gbps;
  return 0.0;
}

double LinkLimits::peak_gbps(const std::string& path) const {
  for (const auto& f : figures)
    if (f.path == path) return f.max_gbps;
  return 0.0;
}

LinkLimits measure_link(const Device& device, const BandwidthOptions& o) {
  CurrentDeviceGuard guard(device);
  const std::size_t n = o.bytes;
  const int runs = std::max(1, o.runs);
  LinkLimits limits;
  limits.device = device.index();
  limits.device_name = device.name();

  DeviceBuffer<std::byte> d_a(device, n);
  DeviceBuffer<std::byte> d_b(device, n);
  // From the pool: a pipeline that measures the link first reuses these blocks afterwards.
  PinnedBlock h_a_block = PinnedPool::global().acquire(n);
  PinnedBlock h_b_block = PinnedPool::global().acquire(n);
  std::byte* const h_a = h_a_block.data();
  std::byte* const h_b = h_b_block.data();
  // Touch every page and give the copies real data; zero pages can be special-cased.
  for (std::size_t i = 0; i < n; ++i) h_a[i] = static_cast<std::byte>(i * 131u + 7u);
  std::memset(h_b, 0x5a, n);
  Stream s1(device);
  Stream s2(device);
  const StreamRef r1 = s1.ref();
  const StreamRef r2 = s2.ref();

  limits.figures.push_back(figure_from_runs(
      "pinned_h2d", "pinned host -> device", n, time_runs(device, r1, o.warmup, runs, [&] {
        SP_CUDA_CHECK(cudaMemcpyAsync(d_a.data(), h_a, n, cudaMemcpyHostToDevice, r1.handle()));
      })));
  limits.figures.push_back(figure_from_runs(
      "pinned_d2h", "pinned device -> host", n, time_runs(device, r1, o.warmup, runs, [&] {
        SP_CUDA_CHECK(cudaMemcpyAsync(h_b, d_a.data(), n, cudaMemcpyDeviceToHost, r1.handle()));
      })));
  {
    // Both copy engines at once: r2 joins r1's start, r1 waits for r2's end.
    Event fork(device, EventTiming::disabled);
    Event join(device, EventTiming::disabled);
    limits.figures.push_back(figure_from_runs(
        "bidirectional", "both directions at once (total)", 2 * n,
        time_runs(device, r1, o.warmup, runs, [&] {
          fork.record(r1);
          r2.wait(fork);
          SP_CUDA_CHECK(cudaMemcpyAsync(d_a.data(), h_a, n, cudaMemcpyHostToDevice, r1.handle()));
          SP_CUDA_CHECK(cudaMemcpyAsync(h_b, d_b.data(), n, cudaMemcpyDeviceToHost, r2.handle()));
          join.record(r2);
          r1.wait(join);
        })));
  }
  limits.figures.push_back(figure_from_runs(
      "d2d", "device -> device (read + write)", 2 * n, time_runs(device, r1, o.warmup, runs, [&] {
        SP_CUDA_CHECK(cudaMemcpyAsync(d_b.data(), d_a.data(), n, cudaMemcpyDeviceToDevice, r1.handle()));
      })));

  if (o.pageable) {
    std::vector<std::byte> p_a(h_a, h_a + n);
    std::vector<std::byte> p_b(n, std::byte{0x33});
    // From pageable memory the driver stages through its own pinned buffer and the call
    // returns only when the source has been consumed: what plain cudaMemcpy users get.
    limits.figures.push_back(figure_from_runs(
        "pageable_h2d", "pageable host -> device (cudaMemcpy)", n,
        time_runs(device, r1, o.warmup, runs, [&] {
          SP_CUDA_CHECK(cudaMemcpyAsync(d_a.data(), p_a.data(), n, cudaMemcpyHostToDevice, r1.handle()));
        })));
    limits.figures.push_back(figure_from_runs(
        "pageable_d2h", "pageable device -> host (cudaMemcpy)", n,
        time_runs(device, r1, o.warmup, runs, [&] {
          SP_CUDA_CHECK(cudaMemcpyAsync(p_b.data(), d_a.data(), n, cudaMemcpyDeviceToHost, r1.handle()));
        })));
  }
  return limits;
}

const LinkLimits& link_limits(Device device) {
  static std::mutex mutex;
  static std::map<int, LinkLimits> cache;
  std::lock_guard lock(mutex);
  auto it = cache.find(device.index());
  if (it == cache.end()) {
    // 256 MiB: large enough that the device-to-device figure is not flattered or hurt by the
    // 50 MB L2, and the copies are long against event resolution.
    BandwidthOptions quick;
    quick.bytes = std::size_t{256} << 20;
    quick.runs = 7;
    quick.warmup = 1;
    quick.pageable = false;
    it = cache.emplace(device.index(), measure_link(device, quick)).first;
  }
  return it->second;
}

}  // namespace streampipe
