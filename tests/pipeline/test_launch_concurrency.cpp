// SPDX-License-Identifier: Apache-2.0
// The planner's footprint rule: launches that fill a fraction of the GPU get a lane each (up
// to what ran at once, the items and the cap); launches that fill it get none.

#include "launch_concurrency.hpp"

#include <gtest/gtest.h>

#include <vector>

namespace streampipe::pipeline::detail {
namespace {

TEST(LaunchConcurrency, ASingleBlockKernelGetsALanePerItemUpToTheCap) {
  // The chapter's kernel on an H100-like GPU: 6.3 ms alone, about as long 128 at once.
  const std::vector<ConcurrencyProbe> probes{{8, 6.4}, {32, 6.6}, {128, 7.0}};
  const auto plan = plan_concurrency(6.3, probes, 200, 128);
  EXPECT_EQ(plan.lanes, 128);
  EXPECT_NEAR(plan.parallel, 128 * 6.3 / 7.0, 1e-9);
  EXPECT_NE(plan.reason.find("128 lanes"), std::string::npos) << plan.reason;
  // Fewer items than the widest probe: no more lanes than items.
  EXPECT_EQ(plan_concurrency(6.3, probes, 50, 128).lanes, 50);
}

TEST(LaunchConcurrency, TheWidthThatRanMostAtOnceBoundsTheLanes) {
  // 32 at once still overlap; 128 at once took four times 32's time: the GPU holds ~32.
  const std::vector<ConcurrencyProbe> probes{{8, 2.1}, {32, 2.4}, {128, 9.6}};
  EXPECT_EQ(plan_concurrency(2.0, probes, 500, 128).lanes, 32);
  // 128 at once ran 82 at once, more than 32 did: 128 lanes, but not one per item beyond.
  const std::vector<ConcurrencyProbe> partly{{8, 6.4}, {32, 6.6}, {128, 9.8}};
  EXPECT_EQ(plan_concurrency(6.3, partly, 500, 256).lanes, 128);
}

TEST(LaunchConcurrency, ALaunchThatFillsTheGpuGetsNoLanesOfItsOwn) {
  const std::vector<ConcurrencyProbe> probes{{8, 15.8}};
  const auto plan = plan_concurrency(2.0, probes, 200, 128);
  EXPECT_EQ(plan.lanes, 0);
  EXPECT_NE(plan.reason.find("fills the GPU"), std::string::npos) << plan.reason;
}

TEST(LaunchConcurrency, NothingToJudgeGivesNoLanes) {
  EXPECT_EQ(plan_concurrency(0.0, std::vector<ConcurrencyProbe>{{8, 1.0}}, 100, 128).lanes, 0);
  EXPECT_EQ(plan_concurrency(1.0, {}, 100, 128).lanes, 0);
  EXPECT_EQ(plan_concurrency(1.0, std::vector<ConcurrencyProbe>{{8, 1.0}}, 1, 128).lanes, 0);
}

TEST(LaunchConcurrency, TheCapHoldsWhateverRanAtOnce) {
  const std::vector<ConcurrencyProbe> probes{{8, 1.0}, {16, 1.0}};
  EXPECT_EQ(plan_concurrency(1.0, probes, 1000, 16).lanes, 16);
}

}  // namespace
}  // namespace streampipe::pipeline::detail
