// SPDX-License-Identifier: Apache-2.0
// The host's description: the NVIDIA driver read from its kernel module's text, and never a
// CUDA start for the description's sake.

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <cstdlib>

#include "streampipe/cuda/device.hpp"
#include "streampipe/host/host_info.hpp"

namespace streampipe::host {
namespace {

TEST(HostInfo, NvidiaDriverIsTheVersionInTheModulesFirstLine) {
  EXPECT_EQ(nvidia_driver_from("NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.95.05  Release Build  "
                               "(dvs-builder@U16)  Tue Sep 23 2025\nGCC version:  gcc 13.3.0"),
            "580.95.05");
  EXPECT_EQ(nvidia_driver_from("NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.104  Sat Aug 19 01:15:15 UTC 2023"),
            "535.104");
  EXPECT_EQ(nvidia_driver_from(""), "");
  EXPECT_EQ(nvidia_driver_from("NVRM version: unknown\n580.95.05"), "");  // the first line only
}

TEST(HostInfo, DescribingTheHostDoesNotStartCuda) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");  // a fresh process: nothing has started CUDA in it
  EXPECT_EXIT(
      {
        const HostInfo h = describe_host();
        const nlohmann::json j = h;
        const bool ok = !cuda_started() && h.cuda_driver_version == HostInfo::kNotAsked &&
                        j.at("cuda_driver") == "not asked" && h.cuda_runtime_version > 0 && h.cores > 0;
        std::_Exit(ok ? 0 : 1);
      },
      ::testing::ExitedWithCode(0), "");
}

TEST(HostInfo, OnceCudaIsStartedTheDriverIsAsked) {
  (void)Device::count();
  ASSERT_TRUE(cuda_started());
  const HostInfo h = describe_host();
  EXPECT_NE(h.cuda_driver_version, HostInfo::kNotAsked);  // 0 where no driver is installed
  EXPECT_EQ(format_cuda_version(13000), "13.0");
  EXPECT_EQ(format_cuda_version(0), "none");
  EXPECT_EQ(format_cuda_version(HostInfo::kNotAsked), "not asked");
}

}  // namespace
}  // namespace streampipe::host
