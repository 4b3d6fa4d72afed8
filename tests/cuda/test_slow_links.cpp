// SPDX-License-Identifier: Apache-2.0
// slow_links: a link far below its peers' median is flagged, and only that one.
#include "streampipe/cuda/slow_links.hpp"

#include <gtest/gtest.h>

#include <limits>
#include <stdexcept>
#include <vector>

namespace streampipe {
namespace {

std::vector<std::size_t> indices(const std::vector<double>& gbps, double threshold = 0.75) {
  std::vector<std::size_t> out;
  for (const auto& s : slow_links(gbps, threshold)) out.push_back(s.index);
  return out;
}

TEST(SlowLinks, NothingToCompareWithFewerThanTwo) {
  EXPECT_TRUE(slow_links(std::vector<double>{}).empty());
  EXPECT_TRUE(slow_links(std::vector<double>{1.0}).empty());
}

TEST(SlowLinks, OneSlowLinkAmongPeers) {
  // GPU 2 behind a slow switch: 20 against peers of about 55.
  const std::vector<double> g{55.0, 54.0, 20.0, 56.0};
  const auto slow = slow_links(g);
  ASSERT_EQ(slow.size(), 1u);
  EXPECT_EQ(slow[0].index, 2u);
  EXPECT_DOUBLE_EQ(slow[0].gbps, 20.0);
  EXPECT_DOUBLE_EQ(slow[0].peers_median, 55.0);  // of 54, 55, 56
}

TEST(SlowLinks, EachIsComparedWithTheOthersOnly) {
  // Index 0: the others are 40, 50, 60 (median 50), 30 < 37.5. Index 1: the others are 30,
  // 50, 60 (median 50), 40 is not below 37.5: its own slow neighbour does not drag it in.
  const auto slow = slow_links(std::vector<double>{30.0, 40.0, 50.0, 60.0});
  ASSERT_EQ(slow.size(), 1u);
  EXPECT_EQ(slow[0].index, 0u);
  EXPECT_DOUBLE_EQ(slow[0].peers_median, 50.0);
}

TEST(SlowLinks, EvenPeersUseTheMeanOfTheMiddleTwo) {
  // Index 0 of three: its peers 40 and 60 have the median 50 (neither middle value alone).
  const auto slow = slow_links(std::vector<double>{10.0, 40.0, 60.0});
  ASSERT_EQ(slow.size(), 1u);
  EXPECT_EQ(slow[0].index, 0u);
  EXPECT_DOUBLE_EQ(slow[0].peers_median, 50.0);
  // 33 against its peers 30 and 60 (45): below 33.75; against 30 alone it would not be.
  EXPECT_EQ(indices({30.0, 33.0, 60.0}), (std::vector<std::size_t>{0, 1}));
}

TEST(SlowLinks, ThresholdIsStrict) {
  EXPECT_TRUE(slow_links(std::vector<double>{75.0, 100.0}).empty());       // exactly 0.75 x 100
  EXPECT_EQ(indices({74.9, 100.0}), (std::vector<std::size_t>{0}));
  EXPECT_TRUE(slow_links(std::vector<double>{74.9, 100.0}, 0.7).empty());
  // Two GPUs: at most one can be below 0.75 of the other.
  EXPECT_EQ(indices({100.0, 10.0}), (std::vector<std::size_t>{1}));
}

TEST(SlowLinks, EqualLinksAreNotFlagged) {
  EXPECT_TRUE(slow_links(std::vector<double>{50.0, 50.0, 50.0, 50.0, 50.0, 50.0, 50.0, 50.0}).empty());
  // A zero (not measured) among measured peers is flagged.
  EXPECT_EQ(indices({0.0, 50.0, 50.0}), (std::vector<std::size_t>{0}));
  EXPECT_TRUE(slow_links(std::vector<double>{0.0, 0.0}).empty());
}

TEST(SlowLinks, RejectsBadInput) {
  EXPECT_THROW((void)slow_links(std::vector<double>{1.0, 2.0}, 0.0), std::invalid_argument);
  EXPECT_THROW((void)slow_links(std::vector<double>{1.0, 2.0}, 1.5), std::invalid_argument);
  EXPECT_THROW((void)slow_links(std::vector<double>{1.0, -2.0}), std::invalid_argument);
  EXPECT_THROW((void)slow_links(std::vector<double>{1.0, std::numeric_limits<double>::quiet_NaN()}),
               std::invalid_argument);
}

}  // namespace
}  // namespace streampipe
