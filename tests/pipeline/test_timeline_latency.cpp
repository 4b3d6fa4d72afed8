// SPDX-License-Identifier: Apache-2.0
#include "streampipe/pipeline/timeline_latency.hpp"

#include <gtest/gtest.h>

#include <vector>

namespace streampipe::pipeline {
namespace {

ItemResult done(std::size_t index, double queued, double enqueue, double latency, std::size_t batch = 1) {
  ItemResult r;
  r.index = index;
  r.status = ItemStatus::done;
  r.batch_size = batch;
  r.timing.queued_ms = queued;
  r.timing.enqueue_ms = enqueue;
  r.timing.latency_ms = latency;
  return r;
}

TEST(TimelineLatency, StagedItemTakesItsStagesAndHostFigures) {
  const std::vector<StageRecord> records = {
      {Stage::stage_in, -1, 0, 1, 1.0, 3.0, 100},
      {Stage::h2d, 0, 0, 1, 3.5, 4.0, 100},
      {Stage::compute, 0, 0, 1, 4.0, 6.0, 0},
      {Stage::d2h, 0, 0, 1, 6.0, 6.25, 50},
      {Stage::stage_out, -1, 0, 1, 6.5, 9.0, 50},
  };
  const std::vector<ItemResult> results = {done(0, 0.5, 0.125, 8.5)};
  const auto t = timeline_queries(records, results, true);
  ASSERT_EQ(t.queries.size(), 1u);
  EXPECT_EQ(t.unplaced, 0u);
  const auto& q = t.queries[0];
  EXPECT_DOUBLE_EQ(q.complete_ms, 9.0);          // end of stage_out: delivered
  EXPECT_DOUBLE_EQ(q.submit_ms, 0.5);            // delivered - latency
  EXPECT_DOUBLE_EQ(q.enqueue_begin_ms, 3.0);     // after staging
  EXPECT_DOUBLE_EQ(q.enqueue_end_ms, 3.125);
  EXPECT_DOUBLE_EQ(q.h2d_ms.value(), 0.5);
  EXPECT_DOUBLE_EQ(q.compute_ms.value(), 2.0);
  EXPECT_DOUBLE_EQ(q.d2h_ms.value(), 0.25);
  EXPECT_EQ(q.batch, 1u);
  EXPECT_EQ(q.items, 1u);
  EXPECT_DOUBLE_EQ(t.first_submit_ms, 0.5);
  EXPECT_DOUBLE_EQ(t.last_complete_ms, 9.0);
}

TEST(TimelineLatency, BatchRecordCoversEveryItemOfTheBatch) {
  // Items 1..3 share one transfer and launch; item 0 ran alone before.
  const std::vector<StageRecord> records = {
      {Stage::h2d, 0, 0, 1, 0.0, 1.0, 10},    {Stage::compute, 0, 0, 1, 1.0, 2.0, 0},
      {Stage::d2h, 0, 0, 1, 2.0, 2.5, 10},    {Stage::h2d, 1, 1, 3, 3.0, 3.75, 30},
      {Stage::compute, 1, 1, 3, 3.75, 5.0, 0}, {Stage::d2h, 1, 1, 3, 5.0, 5.5, 30},
  };
  // Delivered out of order; the queries come back in item order.
  const std::vector<ItemResult> results = {done(2, 0.25, 0.5, 4.0, 3), done(0, 0.0, 0.25, 2.5), done(3, 0.0, 0.5, 3.5, 3),
                                           done(1, 0.5, 0.5, 5.0, 3)};
  const auto t = timeline_queries(records, results, true);
  ASSERT_EQ(t.queries.size(), 4u);
  EXPECT_EQ(t.queries[0].batch, 1u);
  EXPECT_DOUBLE_EQ(t.queries[0].compute_ms.value(), 1.0);
  EXPECT_DOUBLE_EQ(t.queries[0].complete_ms, 2.5);  // end of D2H: no stage_out
  EXPECT_DOUBLE_EQ(t.queries[0].submit_ms, 0.0);
  EXPECT_DOUBLE_EQ(t.queries[0].enqueue_begin_ms, 0.0);  // submit + queued: nothing staged
  for (std::size_t i = 1; i < 4; ++i) {
    const auto& q = t.queries[i];
    EXPECT_EQ(q.batch, 3u) << i;
    EXPECT_DOUBLE_EQ(q.h2d_ms.value(), 0.75) << i;
    EXPECT_DOUBLE_EQ(q.compute_ms.value(), 1.25) << i;
    EXPECT_DOUBLE_EQ(q.d2h_ms.value(), 0.5) << i;
    EXPECT_DOUBLE_EQ(q.complete_ms, 5.5) << i;
  }
  EXPECT_DOUBLE_EQ(t.queries[1].submit_ms, 0.5);  // 5.5 - 5.0
  EXPECT_DOUBLE_EQ(t.queries[1].enqueue_begin_ms, 1.0);
  EXPECT_DOUBLE_EQ(t.queries[1].enqueue_end_ms, 1.5);
  EXPECT_DOUBLE_EQ(t.queries[3].submit_ms, 2.0);

  // The report counts the shared batch's compute once.
  report::LatencyRun run;
  run.queries = t.queries;
  run.wall_ms = 5.5;
  const auto s = report::summarize(run);
  EXPECT_NEAR(s.total_gpu_compute_ms, 1.0 + 1.25, 1e-12);
  EXPECT_NEAR(s.mean_batch, (1.0 + 3 * 3.0) / 4.0, 1e-12);
}

TEST(TimelineLatency, MissingStagesStayEmpty) {
  // Item 0: no H2D record (its input was on the device); item 1: graph replay, copies
  // inside one span (zero-length copy records that moved bytes); item 2: no records at all.
  const std::vector<StageRecord> records = {
      {Stage::compute, 0, 0, 1, 1.0, 2.0, 0},  {Stage::d2h, 0, 0, 1, 2.0, 2.5, 8},
      {Stage::h2d, 1, 1, 1, 3.0, 3.0, 64},     {Stage::compute, 1, 1, 1, 3.0, 4.0, 0},
      {Stage::d2h, 1, 1, 1, 4.0, 4.0, 64},
  };
  const std::vector<ItemResult> results = {done(0, 0, 0.1, 2.0), done(1, 0, 0.1, 1.5), done(2, 0, 0.1, 1.0)};
  const auto t = timeline_queries(records, results, true);
  ASSERT_EQ(t.queries.size(), 2u);
  EXPECT_EQ(t.unplaced, 1u);
  EXPECT_FALSE(t.queries[0].h2d_ms.has_value());
  EXPECT_DOUBLE_EQ(t.queries[0].compute_ms.value(), 1.0);
  EXPECT_DOUBLE_EQ(t.queries[0].d2h_ms.value(), 0.5);
  EXPECT_FALSE(t.queries[1].h2d_ms.has_value());
  EXPECT_DOUBLE_EQ(t.queries[1].compute_ms.value(), 1.0);
  EXPECT_FALSE(t.queries[1].d2h_ms.has_value());
}

TEST(TimelineLatency, HostBackendHasNoDeviceTimesAndFailedItemsAreNoQueries) {
  const std::vector<StageRecord> records = {
      {Stage::h2d, 0, 0, 2, 0.0, 1.0, 10},
      {Stage::compute, 0, 0, 2, 1.0, 2.0, 0},
      {Stage::d2h, 0, 0, 2, 2.0, 3.0, 10},
  };
  ItemResult failed = done(1, 0, 0, 3.0, 2);
  failed.status = ItemStatus::failed;
  ItemResult cancelled = done(2, 0, 0, 0.5);
  cancelled.status = ItemStatus::cancelled;
  const std::vector<ItemResult> results = {done(0, 0.25, 0.5, 3.0, 2), failed, cancelled};
  const auto t = timeline_queries(records, results, false);
  ASSERT_EQ(t.queries.size(), 1u);
  EXPECT_EQ(t.unplaced, 0u);
  const auto& q = t.queries[0];
  EXPECT_FALSE(q.h2d_ms || q.compute_ms || q.d2h_ms);
  EXPECT_EQ(q.batch, 2u);
  EXPECT_DOUBLE_EQ(q.complete_ms, 3.0);
  EXPECT_DOUBLE_EQ(q.submit_ms, 0.0);
  EXPECT_DOUBLE_EQ(q.enqueue_end_ms - q.enqueue_begin_ms, 0.5);
}

TEST(TimelineLatency, QueueRecordGivesSubmitDirectly) {
  const std::vector<StageRecord> records = {
      {Stage::queue, -1, 0, 1, 2.0, 2.5, 0},
      {Stage::h2d, 0, 0, 1, 3.0, 4.0, 10},
      {Stage::compute, 0, 0, 1, 4.0, 5.0, 0},
      {Stage::d2h, 0, 0, 1, 5.0, 6.0, 10},
  };
  const auto t = timeline_queries(records, std::vector<ItemResult>{done(0, 0.5, 0.25, 4.25)}, true);
  ASSERT_EQ(t.queries.size(), 1u);
  EXPECT_DOUBLE_EQ(t.queries[0].submit_ms, 2.0);
  EXPECT_DOUBLE_EQ(t.queries[0].complete_ms, 6.25);
  EXPECT_DOUBLE_EQ(t.queries[0].enqueue_begin_ms, 2.5);
}

TEST(TimelineLatency, NoResultsNoQueries) {
  const std::vector<StageRecord> records = {{Stage::compute, 0, 0, 1, 1.0, 2.0, 0}};
  const auto t = timeline_queries(records, {}, true);
  EXPECT_TRUE(t.queries.empty());
  EXPECT_EQ(t.unplaced, 0u);
  EXPECT_DOUBLE_EQ(t.first_submit_ms, 0.0);
}

}  // namespace
}  // namespace streampipe::pipeline
