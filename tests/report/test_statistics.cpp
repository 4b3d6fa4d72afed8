// SPDX-License-Identifier: Apache-2.0
#include "streampipe/report/statistics.hpp"

#include <gtest/gtest.h>

#include <vector>

namespace streampipe::report {
namespace {

TEST(Statistics, SummarizesLikeNumpy) {
  const std::vector<double> v = {4, 1, 3, 2};
  const auto s = summarize(v);
  EXPECT_EQ(s.count, 4u);
  EXPECT_DOUBLE_EQ(s.min, 1);
  EXPECT_DOUBLE_EQ(s.max, 4);
  EXPECT_DOUBLE_EQ(s.mean, 2.5);
  EXPECT_DOUBLE_EQ(s.median, 2.5);
  EXPECT_NEAR(s.stddev, 1.2909944, 1e-6);
  EXPECT_DOUBLE_EQ(s.p90, 3.7);
  EXPECT_DOUBLE_EQ(s.total, 10);
}

TEST(Statistics, EmptyAndSingle) {
  EXPECT_EQ(summarize(std::span<const double>{}).count, 0u);
  const std::vector<double> one = {7};
  const auto s = summarize(one);
  EXPECT_DOUBLE_EQ(s.p99, 7);
  EXPECT_DOUBLE_EQ(s.stddev, 0);
}

TEST(Statistics, OneMedianForEveryCaller) {
  const std::vector<double> odd = {5, 1, 3}, even = {4, 1, 3, 2};
  EXPECT_DOUBLE_EQ(median(odd), 3);
  EXPECT_DOUBLE_EQ(median(even), 2.5);  // interpolated, not the upper middle element
  EXPECT_DOUBLE_EQ(median(even), summarize(even).median);
  EXPECT_DOUBLE_EQ(median(odd), percentile(odd, 0.5));
  EXPECT_DOUBLE_EQ(median({}), 0);
}

TEST(Statistics, PercentileBounds) {
  const std::vector<double> v = {10, 20, 30};
  EXPECT_DOUBLE_EQ(percentile(v, 0), 10);
  EXPECT_DOUBLE_EQ(percentile(v, 1), 30);
  EXPECT_THROW((void)percentile(v, 1.5), std::invalid_argument);
}

}  // namespace
}  // namespace streampipe::report
