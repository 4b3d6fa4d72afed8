// SPDX-License-Identifier: Apache-2.0
// The soak's slope: the least-squares line through the samples after warm-up, per 10^5
// items; exact on lines, blind to the warm-up, and refused with too few samples.

#include "soak/trend.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>
#include <vector>

namespace streampipe::bench::soak {
namespace {

TEST(SoakTrend, SlopeOfALineIsExactPerHundredThousandItems) {
  std::vector<Sample> s;
  for (int k = 0; k <= 10; ++k) s.push_back({k * 1e5, 5e9 + 3000.0 * k * 1e5});  // 3000 bytes per item
  const Trend t = fit_trend(s, 0);
  EXPECT_NEAR(t.slope_per_1e5, 3000.0 * 1e5, 1e-3 * 3000.0 * 1e5);
  EXPECT_EQ(t.fitted, 11u);
  EXPECT_DOUBLE_EQ(t.first, 5e9);
  EXPECT_DOUBLE_EQ(t.last, 5e9 + 3e9);
  EXPECT_DOUBLE_EQ(t.max, 5e9 + 3e9);
}

TEST(SoakTrend, WarmUpIsLeftOutOfTheFitButNotOfTheMaximum) {
  // Grows by 1 GB during warm-up, then flat with noise of +-1 MB around 2 GB.
  std::vector<Sample> s{{0, 1e9}, {5e4, 2.5e9}};
  for (int k = 1; k <= 20; ++k) s.push_back({1e5 + k * 5e4, 2e9 + (k % 2 == 0 ? 1e6 : -1e6)});
  const Trend t = fit_trend(s, 1e5);
  EXPECT_EQ(t.fitted, 20u);
  EXPECT_LT(std::abs(t.slope_per_1e5), 2e5);  // under 0.2 MB per 10^5 items: flat
  EXPECT_DOUBLE_EQ(t.max, 2.5e9);
  EXPECT_DOUBLE_EQ(t.first, 2e9 - 1e6);
}

TEST(SoakTrend, AStepLateInTheRunShowsAsGrowth) {
  std::vector<Sample> s;
  for (int k = 0; k < 10; ++k) s.push_back({k * 1e5, k < 7 ? 1e9 : 1e9 + 64e6});
  EXPECT_GT(fit_trend(s, 0).slope_per_1e5, 5e6);
}

TEST(SoakTrend, TooFewSamplesAfterWarmUpAreRefused) {
  const std::vector<Sample> one{{0, 1}, {10, 2}, {20, 3}};
  EXPECT_THROW((void)fit_trend(one, 15), std::invalid_argument);
  const std::vector<Sample> same_count{{50, 1}, {50, 2}};
  EXPECT_THROW((void)fit_trend(same_count, 0), std::invalid_argument);
}

}  // namespace
}  // namespace streampipe::bench::soak
