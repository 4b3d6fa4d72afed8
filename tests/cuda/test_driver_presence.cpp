// SPDX-License-Identifier: Apache-2.0
// "No GPU" in words that send the user the right way: the runtime says "insufficient
// driver" with no driver installed at all, and only the driver's presence tells the cases
// apart (src/cuda/driver_presence.hpp).

#include "driver_presence.hpp"  // src/cuda (internal)
#include "streampipe/cuda/device.hpp"
#include "streampipe/cuda/error.hpp"

#include <gtest/gtest.h>

#include <string>

namespace streampipe::detail {
namespace {

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

TEST(NoGpuReason, WithoutADriverSaysSoAndNeverInsufficient) {
  for (const cudaError_t status : {cudaErrorInsufficientDriver, cudaErrorNoDevice, cudaErrorInitializationError}) {
    const std::string why = no_gpu_reason(status, DriverPresence{.loaded = false, .version = 0}, 13000);
    EXPECT_TRUE(has(why, "no NVIDIA driver found")) << why;
    EXPECT_FALSE(has(why, "insufficient")) << why;
    EXPECT_FALSE(has(why, "upgrade")) << why;
  }
}

TEST(NoGpuReason, ADriverTooOldNamesBothVersions) {
  const std::string why = no_gpu_reason(cudaErrorInsufficientDriver, DriverPresence{.loaded = true, .version = 12040}, 13000);
  EXPECT_TRUE(has(why, "supports CUDA 12.4")) << why;
  EXPECT_TRUE(has(why, "CUDA 13.0 runtime")) << why;
  EXPECT_TRUE(has(why, "upgrade the driver")) << why;
  EXPECT_FALSE(has(why, "no NVIDIA driver")) << why;
}

TEST(NoGpuReason, ADriverWithoutDevicesSaysNoDeviceFound) {
  const std::string why = no_gpu_reason(cudaErrorNoDevice, DriverPresence{.loaded = true, .version = 13000}, 13000);
  EXPECT_TRUE(has(why, "no CUDA device found")) << why;
  EXPECT_FALSE(has(why, "no NVIDIA driver")) << why;
}

TEST(NoGpuReason, OtherStatusesWithADriverKeepTheRuntimesWords) {
  const std::string why =
      no_gpu_reason(cudaErrorInitializationError, DriverPresence{.loaded = true, .version = 13000}, 13000);
  EXPECT_TRUE(has(why, "cudaErrorInitializationError")) << why;
}

// On this machine, whatever it has: the reason for no GPU and the runtime error agree with
// whether the driver loads.
TEST(NoGpuReason, ThisMachineIsDescribedByItsDriver) {
  const DriverPresence driver = nvidia_driver();
  if (const auto reason = Device::unavailable_reason(); reason && !driver.loaded) {
    EXPECT_TRUE(has(*reason, "no NVIDIA driver found")) << *reason;
  }
  const CudaError e(cudaErrorInsufficientDriver, "cudaGetDeviceCount(&n)", "f.cpp", 1);
  EXPECT_EQ(has(e.what(), "no NVIDIA driver found"), !driver.loaded) << e.what();
  EXPECT_EQ(has(e.what(), "upgrade the driver"), driver.loaded) << e.what();
}

}  // namespace
}  // namespace streampipe::detail
