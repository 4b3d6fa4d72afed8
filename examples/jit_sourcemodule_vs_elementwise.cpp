// SPDX-License-Identifier: Apache-2.0
// "SourceModule vs ElementwiseKernel", the classic PyCUDA comparison, redone correctly:
// both kernels cover the whole array, compile time is measured apart from run time, runs
// are timed with CUDA events after a warm-up, and both results are checked on the CPU.
// The often-quoted version of this lesson launched the SourceModule kernel with a single
// block, timed the first call (compilation included) and so "showed" a large gap; done
// right, both run at memory bandwidth. `streampipe bench jit` is the full measurement.

#include "streampipe/cuda/bandwidth.hpp"
#include "streampipe/cuda/device_buffer.hpp"
#include "streampipe/cuda/error.hpp"
#include "streampipe/cuda/event.hpp"
#include "streampipe/jit/elementwise.hpp"
#include "streampipe/jit/module_cache.hpp"
#include "streampipe/report/statistics.hpp"

#include <fmt/format.h>

#include <chrono>
#include <functional>
#include <random>
#include <vector>

using namespace streampipe;

namespace {

// Median GPU time per launch over 7 runs of 10 launches, after 3 warm-up launches.
double median_ms(const Device& gpu, Stream& stream, const std::function<void()>& launch) {
  for (int i = 0; i < 3; ++i) launch();
  Event start(gpu), stop(gpu);
  std::vector<double> ms;
  for (int r = 0; r < 7; ++r) {
    start.record(stream.ref());
    for (int i = 0; i < 10; ++i) launch();
    stop.record(stream.ref());
    stop.synchronize();
    ms.push_back(elapsed(start, stop).count() / 10);
  }
  return report::summarize(ms).median;
}

bool check(const DeviceBuffer<float>& d_c, const std::vector<float>& a, const std::vector<float>& b) {
  std::vector<float> c(a.size());
  SP_CUDA_CHECK(cudaMemcpy(c.data(), d_c.data(), d_c.bytes(), cudaMemcpyDeviceToHost));
  for (std::size_t i = 0; i < c.size(); ++i)
    if (c[i] != a[i] + b[i]) return false;
  return true;
}

}  // namespace

int main() {
  if (Device::count() == 0) {
    fmt::print("this lesson times kernels and needs a GPU ({})\n", Device::unavailable_reason().value_or("?"));
    return 0;
  }
  try {
    const Device gpu(0);
    Stream stream(gpu);
    const std::size_t n = 10'000'000;
    std::mt19937 rng(1);
    std::uniform_real_distribution<float> dist(-1, 1);
    std::vector<float> a(n), b(n);
    for (std::size_t i = 0; i < n; ++i) a[i] = dist(rng), b[i] = dist(rng);
    DeviceBuffer<float> d_a(gpu, n), d_b(gpu, n), d_c(gpu, n);
    SP_CUDA_CHECK(cudaMemcpy(d_a.data(), a.data(), d_a.bytes(), cudaMemcpyHostToDevice));
    SP_CUDA_CHECK(cudaMemcpy(d_b.data(), b.data(), d_b.bytes(), cudaMemcpyHostToDevice));
    const double bytes = 3.0 * sizeof(float) * static_cast<double>(n);
    const double d2d = link_limits(gpu).gbps("d2d");
    jit::CacheOptions no_disk;  // measure real compiles, not cache hits
    no_disk.disk = false;

    // SourceModule: the kernel as a string, one thread per element, enough blocks for all.
    const auto t0 = std::chrono::steady_clock::now();
    const jit::Module module = jit::load_module(gpu, jit::Program("add.cu", R"(
extern "C" __global__ void add(const float* a, const float* b, float* c, unsigned long long n) {
  const unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
})"), no_disk);
    const double raw_compile = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    const auto add = module.kernel<void(const float*, const float*, float*, unsigned long long)>("add");
    const auto cfg = LaunchConfig::for_elements(gpu, n);
    SP_CUDA_CHECK(cudaMemset(d_c.data(), 0xff, d_c.bytes()));
    const double raw_ms = median_ms(gpu, stream, [&] {
      add.launch(stream.ref(), cfg, d_a.data(), d_b.data(), d_c.data(), static_cast<unsigned long long>(n));
    });
    const bool raw_ok = check(d_c, a, b);

    // ElementwiseKernel: only the per-element expression is written.
    jit::ElementwiseOptions options;
    options.cache = no_disk;
    const auto t1 = std::chrono::steady_clock::now();
    const jit::ElementwiseKernel ew("const float* a, const float* b, float* c", "c[i] = a[i] + b[i]", options);
    (void)ew.prepare(gpu);
    const double ew_compile = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t1).count();
    SP_CUDA_CHECK(cudaMemset(d_c.data(), 0xff, d_c.bytes()));
    const double ew_ms = median_ms(gpu, stream, [&] { ew(stream.ref(), n, d_a.data(), d_b.data(), d_c.data()); });
    const bool ew_ok = check(d_c, a, b);

    fmt::print("c = a + b on {} floats, {} (device-to-device copy: {:.0f} GB/s)\n", n, gpu.name(), d2d);
    fmt::print("  SourceModule      compile {:7.1f} ms | run {:.4f} ms = {:6.0f} GB/s ({:.0f}%) | {}\n", raw_compile,
               raw_ms, bytes / raw_ms / 1e6, 100 * bytes / raw_ms / 1e6 / d2d, raw_ok ? "correct" : "WRONG");
    fmt::print("  ElementwiseKernel compile {:7.1f} ms | run {:.4f} ms = {:6.0f} GB/s ({:.0f}%) | {}\n", ew_compile,
               ew_ms, bytes / ew_ms / 1e6, 100 * bytes / ew_ms / 1e6 / d2d, ew_ok ? "correct" : "WRONG");
    return raw_ok && ew_ok ? 0 : 1;
  } catch (const std::exception& e) {
    fmt::print(stderr, "{}\n", e.what());
    return 1;
  }
}
