// SPDX-License-Identifier: Apache-2.0
#include "self_check.hpp"

#include "streampipe/cuda/device_buffer.hpp"
#include "streampipe/cuda/event.hpp"
#include "streampipe/cuda/graph.hpp"
#include "streampipe/cuda/pinned_pool.hpp"
#include "streampipe/ops/affine.hpp"
#include "streampipe/ops/multiply_divide.hpp"

#include <fmt/format.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <memory>
#include <random>
#include <vector>

namespace streampipe::bench {
namespace {

struct Check {
  std::string name;
  std::function<std::string()> body;  // returns a detail string; throws on failure
};

std::vector<float> signed_random_floats(std::size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1000.0f, 1000.0f);
  std::vector<float> v(n);
  for (auto& x : v) x = dist(rng);
  return v;
}

void expect_equal(std::span<const float> got, std::span<const float> want, const char* what) {
  for (std::size_t i = 0; i < want.size(); ++i)
    if (std::memcmp(&got[i], &want[i], sizeof(float)) != 0)
      throw std::runtime_error(fmt::format("{}: element {} is {} but should be {}", what, i, got[i], want[i]));
}

std::vector<Check> gpu_checks(const Device& device) {
  std::vector<Check> checks;
  checks.push_back({"pinned pool reuse", [&] {
    PinnedPool pool;
    { auto a = pool.acquire(8 << 20); }
    { auto b = pool.acquire(7 << 20); }
    const auto s = pool.stats();
    if (s.hits != 1 || s.misses != 1) throw std::runtime_error("second request did not reuse the block");
    return fmt::format("2 requests, 1 allocation ({:.1f} ms)", s.allocation_ms);
  }});
  checks.push_back({"affine kernel on 4 streams", [&] {
    constexpr std::size_t n = (1 << 22) + 3;
    const auto x = signed_random_floats(n, 1);
    std::vector<float> want(n);
    ops::affine_host(x, want, 1.5f, -2.0f);
    auto& pool = PinnedPool::global();
    auto h_in = pool.acquire(n * sizeof(float));
    auto h_out = pool.acquire(n * sizeof(float));
    std::memcpy(h_in.data(), x.data(), n * sizeof(float));
    std::memset(h_out.data(), 0xff, n * sizeof(float));  // poison: NaN everywhere
    DeviceBuffer<float> d_in(device, n), d_out(device, n);
    std::vector<Stream> streams;
    for (int i = 0; i < 4; ++i) streams.emplace_back(device);
    const std::size_t part = (n + 3) / 4;
    Event start(device), stop(device);
    start.record(streams[0].ref());
    for (int i = 0; i < 4; ++i) {
      const std::size_t lo = i * part, len = std::min(part, n - lo);
      auto s = streams[i].ref();
      s.wait(start);
      SP_CUDA_CHECK(cudaMemcpyAsync(d_in.data() + lo, h_in.as<float>().data() + lo, len * 4, cudaMemcpyHostToDevice, s.handle()));
      ops::affine(s, d_in.data() + lo, d_out.data() + lo, len, 1.5f, -2.0f);
      SP_CUDA_CHECK(cudaMemcpyAsync(h_out.as<float>().data() + lo, d_out.data() + lo, len * 4, cudaMemcpyDeviceToHost, s.handle()));
      Event done(device, EventTiming::disabled);
      done.record(s);
      streams[0].wait(done);
    }
    stop.record(streams[0].ref());
    stop.synchronize();
    expect_equal(h_out.as<float>(), want, "affine");
    const double ms = elapsed(start, stop).count();
    return fmt::format("{} floats in {:.2f} ms ({:.1f} GB/s each way)", n, ms, n * 4 / (ms * 1e-3) / 1e9);
  }});
  checks.push_back({"CUDA graph replay", [&] {
    constexpr std::size_t n = 1 << 16;
    const auto x = signed_random_floats(n, 2);
    std::vector<float> want(n);
    ops::multiply_divide_host(x, want, 50);
    Stream s(device);
    DeviceBuffer<float> d_in(device, n), d_out(device, n);
    SP_CUDA_CHECK(cudaMemcpyAsync(d_in.data(), x.data(), n * 4, cudaMemcpyHostToDevice, s.handle()));
    SP_CUDA_CHECK(cudaMemsetAsync(d_out.data(), 0xff, n * 4, s.handle()));
    GraphCapture capture(s.ref());
    ops::multiply_divide(s.ref(), d_in.data(), d_out.data(), n, {4, 64, 50});
    const Graph graph = capture.end();
    GraphExec exec(graph);
    for (int i = 0; i < 3; ++i) exec.launch(s.ref());
    std::vector<float> got(n);
    SP_CUDA_CHECK(cudaMemcpyAsync(got.data(), d_out.data(), n * 4, cudaMemcpyDeviceToHost, s.handle()));
    s.synchronize();
    expect_equal(got, want, "graph");
    return fmt::format("{} node(s), 3 replays verified", graph.node_count());
  }});
  return checks;
}

std::vector<Check> host_checks() {
  std::vector<Check> checks;
  checks.push_back({"host reference kernels", [] {
    constexpr std::size_t n = 100'003;
    const auto x = signed_random_floats(n, 3);
    std::vector<float> y(n), back(n);
    ops::affine_host(x, y, 2.0f, 0.0f);
    ops::affine_host(y, back, 0.5f, 0.0f);
    expect_equal(back, x, "affine round trip");
    ops::multiply_divide_host(x, y, 50);
    expect_equal(y, x, "multiply/divide");
    return fmt::format("{} elements", n);
  }});
  return checks;
}

}  // namespace

Table self_check() {
  std::vector<Check> checks = host_checks();
  const bool gpu = Device::count() > 0;
  std::unique_ptr<Device> device;
  if (gpu) {
    device = std::make_unique<Device>(0);
    for (auto& c : gpu_checks(*device)) checks.push_back(std::move(c));
  }
  Table table;
  table.name = "self-check";
  table.title = fmt::format("self-check on {}", gpu ? device->name() : std::string("the host (no GPU)"));
  table.headers = {"check", "result", "detail"};
  table.align = {report::Align::left, report::Align::left, report::Align::left};
  std::size_t failed = 0;
  for (auto& c : checks) {
    Row row;
    row.name = c.name;
    try {
      row.cells = {c.name, "ok", c.body()};
    } catch (const std::exception& e) {
      ++failed;
      row.verified = false;
      row.cells = {c.name, "FAILED", e.what()};
    }
    table.rows.push_back(std::move(row));
  }
  table.notes.push_back(fmt::format("{} of {} checks passed", checks.size() - failed, checks.size()));
  return table;
}

}  // namespace streampipe::bench
