// SPDX-License-Identifier: Apache-2.0
// The runtime-kernel hello world (PyCUDA's SourceModule "multiply_them", as an add): a
// kernel written as a string, compiled by NVRTC at run time for this GPU, loaded as a
// module, launched with type-checked arguments, and checked on the CPU. A second run of
// the program loads it from the disk cache instead of compiling (see the printed origin).
// Without a GPU it still compiles the kernel (NVRTC runs on the CPU) and stops there.

#include "streampipe/cuda/device_buffer.hpp"
#include "streampipe/cuda/error.hpp"
#include "streampipe/cuda/stream.hpp"
#include "streampipe/jit/module_cache.hpp"

#include <fmt/format.h>

#include <random>
#include <vector>

using namespace streampipe;

int main() {
  const jit::Program program("hello_add.cu", R"(
extern "C" __global__ void add_them(float* dest, const float* a, const float* b, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) dest[i] = a[i] + b[i];
}
)");
  try {
    if (Device::count() == 0) {
      const auto r = jit::compile_cached(program, "compute_90");
      fmt::print("no GPU ({}): compiled add_them to {} bytes of PTX for compute_90 and stopping here\n",
                 Device::unavailable_reason().value_or("?"), r.binary.size());
      return 0;
    }
    const Device gpu(0);
    jit::LoadStats stats;
    const jit::Module module = jit::load_module(gpu, program, {}, &stats);
    fmt::print("add_them for {} ({}): {} in {:.2f} ms\n", gpu.name(), module.compiled().arch,
               jit::to_string(stats.origin), stats.total_ms);
    const auto add_them = module.kernel<void(float*, const float*, const float*, int)>("add_them");

    const int n = 400;
    std::mt19937 rng(42);
    std::normal_distribution<float> dist;
    std::vector<float> a(n), b(n), dest(n);
    for (int i = 0; i < n; ++i) a[i] = dist(rng), b[i] = dist(rng);
    DeviceBuffer<float> d_a(gpu, n), d_b(gpu, n), d_dest(gpu, n);
    Stream stream(gpu);
    SP_CUDA_CHECK(cudaMemcpyAsync(d_a.data(), a.data(), d_a.bytes(), cudaMemcpyHostToDevice, stream.handle()));
    SP_CUDA_CHECK(cudaMemcpyAsync(d_b.data(), b.data(), d_b.bytes(), cudaMemcpyHostToDevice, stream.handle()));
    add_them.launch(stream.ref(), LaunchConfig::for_elements(gpu, n), d_dest.data(), d_a.data(), d_b.data(), n);
    SP_CUDA_CHECK(cudaMemcpyAsync(dest.data(), d_dest.data(), d_dest.bytes(), cudaMemcpyDeviceToHost, stream.handle()));
    stream.synchronize();
    int wrong = 0;
    for (int i = 0; i < n; ++i) wrong += dest[i] != a[i] + b[i];
    fmt::print("{} of {} results match the CPU\n", n - wrong, n);
    return wrong == 0 ? 0 : 1;
  } catch (const std::exception& e) {
    fmt::print(stderr, "{}\n", e.what());
    return 1;
  }
}
