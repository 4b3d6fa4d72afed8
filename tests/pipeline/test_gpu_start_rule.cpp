// SPDX-License-Identifier: Apache-2.0
// The rule that decides whether an engine with the CPU in its set starts its GPUs.

#include "gpu_start_rule.hpp"

#include <gtest/gtest.h>

namespace streampipe::pipeline::detail {
namespace {

// 1,000 items, none taken, the CPU measured at 40 ms per item over 8 slots: 5 s alone.
GpuStartFacts a_run() {
  return {.expected_work = 1000, .work_taken = 0, .cpu_in_set = true, .cpu_latency_ms = 40, .cpu_slots = 8,
          .gpu_start_ms = 2000, .gpu_stop_ms = 800};
}

TEST(GpuStartRule, WithoutTheCpuOrAKnownLengthTheGpusStart) {
  GpuStartFacts f = a_run();
  f.cpu_in_set = false;
  EXPECT_EQ(decide_gpu_start(f), GpuStart::now);
  f = a_run();
  f.expected_work = 0;
  EXPECT_EQ(decide_gpu_start(f), GpuStart::now);
}

TEST(GpuStartRule, AnUnmeasuredCpuWaits) {
  GpuStartFacts f = a_run();
  f.cpu_latency_ms = 0;
  EXPECT_EQ(decide_gpu_start(f), GpuStart::wait);
}

TEST(GpuStartRule, TheCpuHavingTakenEverythingSkips) {
  GpuStartFacts f = a_run();
  f.work_taken = 1000;
  EXPECT_EQ(decide_gpu_start(f), GpuStart::skip);
  EXPECT_EQ(cpu_ms_left(f), 0);
}

TEST(GpuStartRule, TheCpuTimeLeftIsTheWorkLeftOverItsSlots) {
  GpuStartFacts f = a_run();
  f.work_taken = 200;
  EXPECT_DOUBLE_EQ(cpu_ms_left(f), 800 * 40.0 / 8);
  f.cpu_slots = 0;  // taken as one
  EXPECT_DOUBLE_EQ(cpu_ms_left(f), 800 * 40.0);
}

TEST(GpuStartRule, TheGpusStartOnlyWhenTheyRepayTheirTearDown) {
  GpuStartFacts f = a_run();  // 5 s left against 2 + 2 x 0.8 = 3.6 s
  EXPECT_DOUBLE_EQ(gpu_break_even_ms(f), 3600);
  EXPECT_EQ(decide_gpu_start(f), GpuStart::now);
  f.work_taken = 300;  // 3.5 s left: longer than the start alone, too short to repay the tear-down
  EXPECT_GT(cpu_ms_left(f), f.gpu_start_ms);
  EXPECT_EQ(decide_gpu_start(f), GpuStart::skip);
  f.gpu_stop_ms = 0;  // a tear-down that costs nothing: the start alone is weighed
  EXPECT_EQ(decide_gpu_start(f), GpuStart::now);
}

TEST(GpuStartRule, EachGpuInTheSetCountsAsFastAsTheCpu) {
  GpuStartFacts f = a_run();
  f.gpus_joined = 1;  // 2.5 s left for the CPU and one GPU, against 2 + 3 x 0.8 = 4.4 s
  EXPECT_DOUBLE_EQ(set_ms_left(f), 2500);
  EXPECT_DOUBLE_EQ(gpu_break_even_ms(f), 4400);
  EXPECT_EQ(decide_gpu_start(f), GpuStart::skip);
  f.expected_work = 2000;  // 5 s left for the two
  EXPECT_EQ(decide_gpu_start(f), GpuStart::now);
}

TEST(GpuStartRule, AMeasuredSetIsJudgedAtItsRate) {
  GpuStartFacts f = a_run();
  f.gpus_joined = 1;
  f.work_taken = 400;
  f.set_rate = 0.2;  // 600 items left at 0.2 an ms: 3 s, under 2 + 3 x 0.8 s
  EXPECT_DOUBLE_EQ(set_ms_left(f), 3000);
  EXPECT_EQ(decide_gpu_start(f), GpuStart::skip);
  f.set_rate = 0.1;  // 6 s
  EXPECT_EQ(decide_gpu_start(f), GpuStart::now);
}

}  // namespace
}  // namespace streampipe::pipeline::detail
