// SPDX-License-Identifier: Apache-2.0
// The engine's stop state: why an item that never started did not.

#include "stop_state.hpp"

#include <gtest/gtest.h>

#include <string>
#include <utility>

namespace streampipe::pipeline::detail {
namespace {

TEST(StopState, RunsUntilCancelledOrFailed) {
  StopState running;
  EXPECT_FALSE(running.stopped());

  StopState cancelled;
  cancelled.cancel();
  EXPECT_TRUE(cancelled.stopped());
  EXPECT_EQ(cancelled.reason(), std::make_pair(ItemStatus::cancelled, std::string("cancelled before it started")));
}

TEST(StopState, KeepsTheFirstDeviceError) {
  StopState state;
  state.fail("illegal address");
  state.fail("launch failure");
  EXPECT_TRUE(state.stopped());
  EXPECT_EQ(state.reason().first, ItemStatus::failed);
  EXPECT_EQ(state.reason().second, "the device failed earlier: illegal address");
  state.cancel();  // cancelling afterwards says so to the items still waiting
  EXPECT_EQ(state.reason().first, ItemStatus::cancelled);
}

}  // namespace
}  // namespace streampipe::pipeline::detail
