// SPDX-License-Identifier: Apache-2.0
// gray::run_bound: which stage bound a run, from records whose busy times are known.
#include "streampipe/tools/gray/bound.hpp"

#include <gtest/gtest.h>

namespace streampipe::tools::gray {
namespace {

using pipeline::Stage;

RunSummary summary_of(std::string backend, int threads, int lanes, std::vector<pipeline::StageRecord> records,
                      double wall_ms) {
  RunSummary s;
  s.threads = threads;
  s.lanes = lanes;
  s.backend = std::move(backend);
  s.records = std::move(records);
  s.wall_ms = wall_ms;
  return s;
}

TEST(GrayBound, WorkersBoundAGpuRun) {
  // 2 workers over 100 ms: 80 + 70 ms of decode and 30 ms of encode = 90%; the GPU's lanes
  // overlap each other and are busy 15 ms of 100.
  const auto s = summary_of("gpu", 2, 2,
                            {{Stage::stage_in, -1, 0, 1, 0, 80, 0},
                             {Stage::stage_in, -1, 1, 1, 10, 80, 0},
                             {Stage::stage_out, -1, 0, 1, 80, 100, 0},
                             {Stage::stage_out, -1, 1, 1, 85, 95, 0},
                             {Stage::h2d, 0, 0, 1, 80, 85, 0, 0},
                             {Stage::compute, 1, 1, 1, 82, 90, 0, 0},
                             {Stage::d2h, 0, 0, 1, 90, 95, 0, 0}},
                            100);
  const RunBound b = run_bound(s);
  ASSERT_EQ(b.stages.size(), 2u);
  EXPECT_EQ(b.bound_stage().stage, "host workers");
  EXPECT_EQ(b.stages[0].capacity, 2);
  EXPECT_DOUBLE_EQ(b.stages[0].share, 0.9);
  EXPECT_DOUBLE_EQ(b.decode_share, 0.75);
  EXPECT_DOUBLE_EQ(b.encode_share, 0.15);
  EXPECT_EQ(b.stages[1].stage, "device");
  EXPECT_EQ(b.stages[1].capacity, 1);
  EXPECT_DOUBLE_EQ(b.stages[1].share, 0.15);
}

TEST(GrayBound, EachGpuCountsOnceAndTheBusiestStageWins) {
  // Two GPUs, each busy 60 of 100 ms; the one worker is busy 20 ms.
  const auto s = summary_of("gpu", 1, 1,
                            {{Stage::stage_in, -1, 0, 1, 0, 20, 0},
                             {Stage::compute, 0, 0, 1, 20, 80, 0, 0},
                             {Stage::compute, 0, 1, 1, 30, 90, 0, 1}},
                            100);
  const RunBound b = run_bound(s);
  EXPECT_EQ(b.bound_stage().stage, "device");
  EXPECT_EQ(b.stages[1].capacity, 2);
  EXPECT_DOUBLE_EQ(b.stages[1].share, 0.6);
  EXPECT_DOUBLE_EQ(b.stages[0].share, 0.2);
}

TEST(GrayBound, HostLanesAreSummedOverTheirNumber) {
  // Host backend, 2 lanes: 50 + 30 ms of luma in 100 ms = 40%; workers and lanes not given: the most at
  // once (2) is their number.
  const auto s = summary_of("host", 0, 0,
                            {{Stage::stage_in, -1, 0, 1, 0, 10, 0},
                             {Stage::stage_in, -1, 1, 1, 5, 10, 0},
                             {Stage::compute, 0, 0, 1, 10, 60, 0},
                             {Stage::compute, 1, 1, 1, 10, 40, 0}},
                            100);
  const RunBound b = run_bound(s);
  EXPECT_EQ(b.stages[0].capacity, 2);
  EXPECT_DOUBLE_EQ(b.stages[0].share, 0.075);
  EXPECT_EQ(b.stages[1].stage, "host lanes");
  EXPECT_EQ(b.stages[1].capacity, 2);
  EXPECT_DOUBLE_EQ(b.stages[1].share, 0.4);
  EXPECT_EQ(b.bound_stage().stage, "host lanes");
  EXPECT_TRUE(run_bound(RunSummary{}).stages.empty());
}

}  // namespace
}  // namespace streampipe::tools::gray
