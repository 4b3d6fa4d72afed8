// SPDX-License-Identifier: Apache-2.0
#include "streampipe/serving/policy.hpp"

#include <gtest/gtest.h>

#include <stdexcept>
#include <vector>

namespace streampipe::serving {
namespace {

using std::chrono::microseconds;
using std::chrono::nanoseconds;

TEST(BatchPolicy, DefaultBucketsArePowersOfTwoAndMax) {
  BatchPolicy p;
  p.max_batch_size = 24;
  EXPECT_EQ(bucket_sizes(p), (std::vector<std::size_t>{1, 2, 4, 8, 16, 24}));
  p.max_batch_size = 1;
  EXPECT_EQ(bucket_sizes(p), (std::vector<std::size_t>{1}));
}

TEST(BatchPolicy, PreferredSizesAreTheBuckets) {
  BatchPolicy p;
  p.max_batch_size = 16;
  p.preferred_batch_sizes = {8, 4, 4};
  EXPECT_EQ(bucket_sizes(p), (std::vector<std::size_t>{4, 8, 16}));
}

TEST(BatchPolicy, BucketForPadsUpToTheSmallestThatHolds) {
  const std::vector<std::size_t> b = {1, 2, 4, 8, 16, 24};
  EXPECT_EQ(bucket_for(1, b), 1u);
  EXPECT_EQ(bucket_for(3, b), 4u);
  EXPECT_EQ(bucket_for(5, b), 8u);
  EXPECT_EQ(bucket_for(16, b), 16u);
  EXPECT_EQ(bucket_for(17, b), 24u);
  EXPECT_THROW((void)bucket_for(25, b), std::invalid_argument);
  EXPECT_THROW((void)bucket_for(0, b), std::invalid_argument);
}

TEST(BatchPolicy, ValidateNamesTheBadValue) {
  BatchPolicy p;
  p.max_batch_size = 8;
  p.preferred_batch_sizes = {4, 9};
  try {
    validate(p);
    FAIL() << "expected invalid_argument";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("preferred batch size 9"), std::string::npos) << e.what();
  }
  p.preferred_batch_sizes = {0};
  EXPECT_THROW(validate(p), std::invalid_argument);
  p.preferred_batch_sizes.clear();
  p.max_batch_size = 0;
  EXPECT_THROW(validate(p), std::invalid_argument);
}

TEST(BatchPolicy, FullBatchGoesAtOnce) {
  BatchPolicy p;
  p.max_batch_size = 8;
  p.max_queue_delay = microseconds(1000);
  const auto d = decide_batch(20, nanoseconds(0), p);
  EXPECT_TRUE(d.dispatch());
  EXPECT_EQ(d.take, 8u);
}

TEST(BatchPolicy, LargestPreferredSizeGoesAtOnce) {
  BatchPolicy p;
  p.max_batch_size = 16;
  p.preferred_batch_sizes = {4, 8};
  p.max_queue_delay = microseconds(1000);
  EXPECT_EQ(decide_batch(5, nanoseconds(0), p).take, 4u);
  EXPECT_EQ(decide_batch(11, nanoseconds(0), p).take, 8u);
  const auto d = decide_batch(3, microseconds(300), p);
  EXPECT_FALSE(d.dispatch());
  EXPECT_EQ(d.wait, microseconds(700));
}

TEST(BatchPolicy, QueueDelayBoundsTheWait) {
  BatchPolicy p;
  p.max_batch_size = 16;
  p.max_queue_delay = microseconds(100);
  const auto wait = decide_batch(3, microseconds(40), p);
  EXPECT_FALSE(wait.dispatch());
  EXPECT_EQ(wait.wait, microseconds(60));
  const auto go = decide_batch(3, microseconds(100), p);
  EXPECT_EQ(go.take, 3u);
}

TEST(BatchPolicy, ZeroDelaySendsEverythingAtOnce) {
  BatchPolicy p;
  p.max_batch_size = 16;
  p.max_queue_delay = microseconds(0);
  EXPECT_EQ(decide_batch(1, nanoseconds(0), p).take, 1u);
  EXPECT_EQ(decide_batch(7, nanoseconds(0), p).take, 7u);
}

TEST(BatchPolicy, NothingPendingWaitsIndefinitely) {
  const auto d = decide_batch(0, nanoseconds(0), BatchPolicy{});
  EXPECT_FALSE(d.dispatch());
  EXPECT_EQ(d.wait, nanoseconds::max());
}

}  // namespace
}  // namespace streampipe::serving
