// SPDX-License-Identifier: Apache-2.0
// host::process_age against clocks of this test program: the process began before this
// file's static initializer ran, and not long before it.
#include "streampipe/host/process_age.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <thread>

namespace {

const auto at_static_init = std::chrono::steady_clock::now();

double ms_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t).count();
}

TEST(ProcessAge, BracketsTheTimeSinceStaticInitialization) {
  const auto age = streampipe::host::process_age();
  ASSERT_TRUE(age.has_value()) << "/proc/self/stat or CLOCK_BOOTTIME unreadable";
  const double since_init = ms_since(at_static_init);
  EXPECT_GT(age->resolution_ms, 0);
  EXPECT_LE(age->resolution_ms, 100);
  // The start is known to half a tick either way.
  EXPECT_GE(age->ms, since_init - age->resolution_ms / 2 - 1);
  // exec and loading this program took well under 10 s, even under a sanitizer.
  EXPECT_LT(age->ms, since_init + 10'000);
}

TEST(ProcessAge, GrowsWithTheClock) {
  const auto a = streampipe::host::process_age();
  std::this_thread::sleep_for(std::chrono::milliseconds(60));
  const auto b = streampipe::host::process_age();
  ASSERT_TRUE(a && b);
  EXPECT_NEAR(b->ms - a->ms, 60, 30);
}

}  // namespace
