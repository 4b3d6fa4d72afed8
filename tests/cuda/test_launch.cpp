// SPDX-License-Identifier: Apache-2.0
#include "streampipe/cuda/device_buffer.hpp"
#include "streampipe/cuda/launch.hpp"
#include "support/gpu.hpp"
#include "test_kernels.hpp"

#include <vector>

namespace streampipe {
namespace {

TEST(LaunchGpu, ForElementsCoversProblem) {
  SP_REQUIRE_GPU();
  const Device d(0);
  const auto cfg = LaunchConfig::for_elements(d, 1000, 128);
  EXPECT_EQ(cfg.grid.x, 8u);
  EXPECT_EQ(cfg.block.x, 128u);
  const auto capped = LaunchConfig::for_elements(d, std::size_t{1} << 34, 256, 1, 4);
  EXPECT_EQ(capped.grid.x, 4u * static_cast<unsigned>(d.multiprocessors()));
  EXPECT_EQ(LaunchConfig::for_elements(d, 0, 256).grid.x, 1u);
  EXPECT_THROW((void)LaunchConfig::for_elements(d, 10, 0), std::invalid_argument);
}

TEST(LaunchGpu, TypedLaunchRunsKernel) {
  SP_REQUIRE_GPU();
  const Device d(0);
  Stream s(d);
  constexpr std::size_t n = 12345;
  DeviceBuffer<int> out(d, n);
  launch(s.ref(), LaunchConfig::for_elements(d, n, 256), testing::fill_index_kernel(), out.data(), n, 5);
  std::vector<int> host(n);
  SP_CUDA_CHECK(cudaMemcpyAsync(host.data(), out.data(), out.bytes(), cudaMemcpyDeviceToHost, s.handle()));
  s.synchronize();
  for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(host[i], static_cast<int>(i) + 5);
}

TEST(LaunchGpu, InvalidConfigurationIsRejectedWithItsLimit) {
  SP_REQUIRE_GPU();
  const Device d(0);
  Stream s(d);
  DeviceBuffer<int> out(d, 4096);
  LaunchConfig too_big;
  too_big.block = dim3(4096);
  try {
    launch(s.ref(), too_big, testing::fill_index_kernel(), out.data(), std::size_t{4096}, 0);
    FAIL() << "a 4096-thread block was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("exceeds the device limit"), std::string::npos);
  }
  LaunchConfig empty;
  empty.grid = dim3(0);
  EXPECT_THROW(launch(s.ref(), empty, testing::fill_index_kernel(), out.data(), std::size_t{1}, 0),
               std::invalid_argument);
  LaunchConfig shared;
  shared.dynamic_shared_bytes = std::size_t{1} << 30;
  EXPECT_THROW(validate(shared, d), std::invalid_argument);
}

TEST(LaunchGpu, RuntimeLaunchFailureIsCudaErrorNamingTheLaunch) {
  SP_REQUIRE_GPU();
  const Device d(0);
  Stream s(d);
  DeviceBuffer<int> out(d, 256);
  // More than 48 KiB of dynamic shared memory is within the device's opt-in limit (so it
  // passes validation) but fails at launch unless the kernel opted in.
  LaunchConfig cfg;
  cfg.block = dim3(256);
  cfg.dynamic_shared_bytes = 100 * 1024;
  try {
    launch(s.ref(), cfg, testing::needs_shared_kernel(), out.data());
    FAIL() << "launch without the shared-memory opt-in succeeded";
  } catch (const CudaError& e) {
    EXPECT_FALSE(e.sticky());
    EXPECT_NE(e.call().find("cudaLaunchKernel"), std::string::npos);
    EXPECT_NE(e.call().find("shared 102400 B"), std::string::npos);
  }
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
  cfg.dynamic_shared_bytes = 256 * sizeof(int);
  EXPECT_NO_THROW(launch(s.ref(), cfg, testing::needs_shared_kernel(), out.data()));
  std::vector<int> host(256);
  SP_CUDA_CHECK(cudaMemcpyAsync(host.data(), out.data(), out.bytes(), cudaMemcpyDeviceToHost, s.handle()));
  s.synchronize();
  EXPECT_EQ(host[0], 255);
  EXPECT_EQ(host[255], 0);
}

}  // namespace
}  // namespace streampipe
