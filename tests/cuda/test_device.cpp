// SPDX-License-Identifier: Apache-2.0
#include "streampipe/cuda/device.hpp"
#include "support/gpu.hpp"

#include "driver_api.hpp"

#include <cuda.h>

#include <thread>

namespace streampipe {
namespace {

TEST(DeviceGpu, PropertiesAreReadAndCached) {
  SP_REQUIRE_GPU();
  const Device d(0);
  const Device same(0);
  const auto& p1 = d.properties();
  const auto& p2 = same.properties();
  EXPECT_EQ(&p1, &p2);
  EXPECT_GT(d.multiprocessors(), 0);
  EXPECT_FALSE(d.name().empty());
  EXPECT_GE(d.copy_engines(), 1);
  const auto mem = d.memory_info();
  EXPECT_GT(mem.total_bytes, 0u);
  EXPECT_LE(mem.free_bytes, mem.total_bytes);
  EXPECT_FALSE(d.pcie_link().bus_id.empty());
}

TEST(DeviceGpu, GuardRestoresPreviousDevice) {
  SP_REQUIRE_GPU();
  const int n = Device::count();
  Device(0).make_current();
  {
    CurrentDeviceGuard guard(Device(n - 1));
    EXPECT_EQ(Device::current().index(), n - 1);
  }
  EXPECT_EQ(Device::current().index(), 0);
}

TEST(DeviceGpu, GuardLeavesAThreadWithoutAContextWithout) {
  SP_REQUIRE_GPU();
  const int last = Device::count() - 1;
  const auto current_context = [] {
    CUcontext c = nullptr;
    EXPECT_EQ(driver::api().ctx_get_current(&c), CUDA_SUCCESS);
    return c;
  };
  std::thread([&] {
    ASSERT_EQ(current_context(), nullptr);  // a new thread
    {
      const CurrentDeviceGuard guard{Device(last)};
      EXPECT_EQ(Device::current().index(), last);
      EXPECT_NE(current_context(), nullptr);
    }
    // Not device 0 made current on the way out: its context may never have been made.
    EXPECT_EQ(current_context(), nullptr);
    {
      const CurrentDeviceGuard again{Device(last)};
      EXPECT_EQ(Device::current().index(), last);
    }
    EXPECT_EQ(current_context(), nullptr);
  }).join();
}

TEST(DeviceGpu, SynchronizeSucceeds) {
  SP_REQUIRE_GPU();
  EXPECT_NO_THROW(Device(0).synchronize());
}

}  // namespace
}  // namespace streampipe
