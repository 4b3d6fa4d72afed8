// SPDX-License-Identifier: Apache-2.0
// Modules on a device: load, typed and untyped launches, error paths, the caches.
#include "device_arrays.hpp"
#include "support/gpu.hpp"

#include "streampipe/cuda/device_buffer.hpp"
#include "streampipe/cuda/error.hpp"
#include "streampipe/cuda/stream.hpp"
#include "streampipe/jit/errors.hpp"
#include "streampipe/jit/module.hpp"
#include "streampipe/jit/module_cache.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <random>
#include <stdexcept>
#include <thread>
#include <vector>

using namespace streampipe;
using namespace streampipe::jit;
using namespace streampipe::jit::test_support;
namespace fs = std::filesystem;

namespace {

const char* kernels = R"(
extern "C" __global__ void add(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}
template <typename T> __global__ void axpb(T* x, T a, T b, unsigned long long n) {
  for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < n;
       i += (unsigned long long)gridDim.x * blockDim.x)
    x[i] = a * x[i] + b;
}
__device__ int counter;
)";

Program kernels_program() {
  return Program("kernels.cu", kernels).name_expression("axpb<int>").name_expression("axpb<double>");
}

}  // namespace

TEST(JitModule, TypedLaunchMatchesCpuOnOddSizes) {
  SP_REQUIRE_GPU();
  const Device gpu(0);
  const Module m = load_module(gpu, kernels_program(), memory_only());
  const auto add = m.kernel<void(const float*, const float*, float*, int)>("add");
  Stream stream(gpu);
  for (const std::size_t n : {1u, 3u, 257u, 100003u}) {
    const auto a = random_floats(n, 1, -100.0f, 100.0f), b = random_floats(n, 2, -100.0f, 100.0f);
    auto da = upload(gpu, a), db = upload(gpu, b);
    DeviceBuffer<float> dc(gpu, n);
    poison(dc);
    add.launch(stream.ref(), LaunchConfig::for_elements(gpu, n), da.data(), db.data(), dc.data(), static_cast<int>(n));
    stream.synchronize();
    const auto c = download(dc);
    for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(c[i], a[i] + b[i]) << "n=" << n << " i=" << i;
  }
}

TEST(JitModule, TemplateKernelsThroughNameExpressions) {
  SP_REQUIRE_GPU();
  const Device gpu(0);
  const Module m = load_module(gpu, kernels_program(), memory_only());
  Stream stream(gpu);
  const std::size_t n = 12345;
  std::vector<int> x(n);
  std::mt19937 rng(7);
  for (auto& v : x) v = static_cast<int>(rng() % 20001) - 10000;
  auto dx = upload(gpu, x);
  const auto axpb = m.kernel<void(int*, int, int, unsigned long long)>("axpb<int>");
  axpb.launch(stream.ref(), LaunchConfig::for_elements(gpu, n, 128, 1, 4), dx.data(), 3, -7, n);
  stream.synchronize();
  const auto y = download(dx);
  for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(y[i], 3 * x[i] - 7) << i;
  EXPECT_EQ(m.global_size("counter"), sizeof(int));
  EXPECT_THROW((void)m.global_size("nothing"), JitError);
}

TEST(JitModule, UntypedLaunchChecksCountAndSizes) {
  SP_REQUIRE_GPU();
  const Device gpu(0);
  const Module m = load_module(gpu, kernels_program(), memory_only());
  Stream stream(gpu);
  const Kernel k = m.kernel("axpb<double>");
  ASSERT_TRUE(k.parameter_sizes().has_value());
  EXPECT_EQ(*k.parameter_sizes(), (std::vector<std::size_t>{8, 8, 8, 8}));
  const std::size_t n = 1001;
  std::vector<double> x(n);
  for (std::size_t i = 0; i < n; ++i) x[i] = static_cast<double>(i) * 0.5;
  auto dx = upload(gpu, x);
  const auto cfg = LaunchConfig::for_elements(gpu, n);
  k.launch(stream.ref(), cfg, dx.data(), 2.0, 1.0, static_cast<unsigned long long>(n));
  stream.synchronize();
  const auto y = download(dx);
  for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(y[i], 2.0 * x[i] + 1.0) << i;
  try {
    k.launch(stream.ref(), cfg, dx.data(), 2.0, 1.0);
    FAIL() << "a missing argument must be refused";
  } catch (const JitError& e) {
    EXPECT_NE(std::string(e.what()).find("takes 4 argument(s), 3 given"), std::string::npos) << e.what();
  }
  EXPECT_THROW(k.launch(stream.ref(), cfg, dx.data(), 2.0f, 1.0, n), JitError) << "a 4-byte float for a double";
  EXPECT_THROW((void)m.kernel<void(float*, int)>("add"), JitError) << "declared signature differs from the kernel";
  stream.synchronize();  // nothing bad was launched
}

TEST(JitModule, UnknownKernelNamesTheKernelAndListsOthers) {
  SP_REQUIRE_GPU();
  const Device gpu(0);
  const Module m = load_module(gpu, kernels_program(), memory_only());
  try {
    (void)m.kernel("ad");
    FAIL();
  } catch (const JitError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("'ad'"), std::string::npos) << what;
    EXPECT_NE(what.find("add"), std::string::npos) << what;
  }
  EXPECT_THROW((void)m.kernel("axpb<float>"), JitError) << "not instantiated";
}

TEST(JitModule, BadLaunchConfigurationsAreRefusedBeforeTheGpu) {
  SP_REQUIRE_GPU();
  const Device gpu(0);
  const Module m = load_module(gpu, kernels_program(), memory_only());
  const auto add = m.kernel<void(const float*, const float*, float*, int)>("add");
  Stream stream(gpu);
  LaunchConfig too_big;
  too_big.block = dim3(4096, 1, 1);
  EXPECT_THROW(add.launch(stream.ref(), too_big, nullptr, nullptr, nullptr, 0), std::invalid_argument);
  LaunchConfig shared;
  shared.dynamic_shared_bytes = std::size_t{1} << 30;
  EXPECT_THROW(add.launch(stream.ref(), shared, nullptr, nullptr, nullptr, 0), std::invalid_argument);
  stream.synchronize();
}

TEST(JitModule, DriverLaunchFailureIsAClearErrorAndNotSticky) {
  SP_REQUIRE_GPU();
  const Device gpu(0);
  const Module m = load_module(
      gpu, Program("bounded.cu", "extern \"C\" __global__ void __launch_bounds__(64) bounded(int* x) { x[threadIdx.x] = 1; }"),
      memory_only());
  const auto k = m.kernel<void(int*)>("bounded");
  Stream stream(gpu);
  DeviceBuffer<int> x(gpu, 128);
  LaunchConfig over;  // more threads than the kernel's __launch_bounds__ allow
  over.block = dim3(128, 1, 1);
  try {
    k.launch(stream.ref(), over, x.data());
    FAIL() << "the driver must refuse 128 threads for a kernel bounded to 64";
  } catch (const DriverError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("cuLaunchKernel(bounded"), std::string::npos) << what;
    EXPECT_NE(what.find("block (128,1,1)"), std::string::npos) << what;
    EXPECT_EQ(e.api(), Error::Api::cuda_driver);
    EXPECT_NE(e.status(), 0) << what;
    EXPECT_EQ(e.status_name().rfind("CUDA_ERROR_", 0), 0u) << what;
    EXPECT_NE(e.file().find("module.cpp"), std::string::npos) << what;
  }
  LaunchConfig ok;
  ok.block = dim3(64, 1, 1);
  k.launch(stream.ref(), ok, x.data());
  EXPECT_NO_THROW(stream.synchronize()) << "a refused launch leaves the context usable";
}

TEST(JitModule, CompileErrorDoesNotCrash) {
  SP_REQUIRE_GPU();
  const Device gpu(0);
  EXPECT_THROW((void)load_module(gpu, Program("bad.cu", "extern \"C\" __global__ void k() { oops; }"), memory_only()),
               CompileError);
}

TEST(JitModule, MemoryAndDiskCacheOnTheDevice) {
  SP_REQUIRE_GPU();
  const Device gpu(0);
  std::string tmpl = (fs::temp_directory_path() / "sp-jit-gpu-XXXXXX").string();
  ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
  CacheOptions o;
  o.directory = tmpl;
  // A unique source so no earlier run's entries interfere.
  const Program p("cached.cu", std::string(kernels) + "// " + tmpl + "\n");
  clear_memory_cache();
  LoadStats s1, s2, s3;
  const Module m1 = load_module(gpu, p, o, &s1);
  EXPECT_EQ(s1.origin, LoadOrigin::compiled);
  const Module m2 = load_module(gpu, p, o, &s2);
  EXPECT_EQ(s2.origin, LoadOrigin::memory);
  clear_memory_cache();
  const Module m3 = load_module(gpu, p, o, &s3);
  EXPECT_EQ(s3.origin, LoadOrigin::disk);
  EXPECT_TRUE(m3.compiled().from_disk_cache);
  // The module loaded from disk works.
  Stream stream(gpu);
  const std::size_t n = 999;
  const auto a = random_floats(n, 5, -100.0f, 100.0f), b = random_floats(n, 6, -100.0f, 100.0f);
  auto da = upload(gpu, a), db = upload(gpu, b);
  DeviceBuffer<float> dc(gpu, n);
  poison(dc);
  m3.kernel<void(const float*, const float*, float*, int)>("add").launch(
      stream.ref(), LaunchConfig::for_elements(gpu, n), da.data(), db.data(), dc.data(), static_cast<int>(n));
  stream.synchronize();
  const auto c = download(dc);
  for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(c[i], a[i] + b[i]) << i;
  std::error_code ec;
  fs::remove_all(tmpl, ec);
}

TEST(JitModule, PtxForTheDeviceIsJitCompiledByTheDriver) {
  SP_REQUIRE_GPU();
  const Device gpu(0);
  const auto& prop = gpu.properties();
  Program p("ptx.cu", kernels);
  p.arch(fmt::format("compute_{}", std::min(prop.major * 10 + prop.minor, nvrtc_supported_archs().back())));
  const Module m = load_module(gpu, p, memory_only());
  EXPECT_EQ(m.compiled().kind, BinaryKind::ptx);
  EXPECT_NO_THROW((void)m.kernel("add"));
}

TEST(JitModule, LaunchesFromAnotherThreadAndAnotherCurrentDevice) {
  SP_REQUIRE_GPU();
  const Device gpu(0);
  const Module m = load_module(gpu, kernels_program(), memory_only());
  const auto add = m.kernel<void(const float*, const float*, float*, int)>("add");
  const std::size_t n = 4097;
  const auto a = random_floats(n, 8, -100.0f, 100.0f), b = random_floats(n, 9, -100.0f, 100.0f);
  auto da = upload(gpu, a), db = upload(gpu, b);
  DeviceBuffer<float> dc(gpu, n);
  poison(dc);
  std::string error;
  std::thread worker([&] {
    try {
      Stream stream(gpu);
      add.launch(stream.ref(), LaunchConfig::for_elements(gpu, n), da.data(), db.data(), dc.data(), static_cast<int>(n));
      stream.synchronize();
    } catch (const std::exception& e) {
      error = e.what();
    }
  });
  worker.join();
  ASSERT_TRUE(error.empty()) << error;
  const auto c = download(dc);
  for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(c[i], a[i] + b[i]) << i;
}
