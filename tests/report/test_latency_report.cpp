// SPDX-License-Identifier: Apache-2.0
#include "streampipe/report/latency_report.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <string>

namespace streampipe::report {
namespace {

QueryRecord record(double submit, double latency, double enqueue, double h2d, double compute, double d2h) {
  QueryRecord q;
  q.submit_ms = submit;
  q.enqueue_begin_ms = submit + 0.01;
  q.enqueue_end_ms = q.enqueue_begin_ms + enqueue;
  q.complete_ms = submit + latency;
  q.h2d_ms = h2d;
  q.compute_ms = compute;
  q.d2h_ms = d2h;
  return q;
}

bool has_warning(const LatencySummary& s, const std::string& prefix) {
  return std::any_of(s.warnings.begin(), s.warnings.end(),
                     [&](const std::string& w) { return w.rfind(prefix, 0) == 0; });
}

TEST(LatencyReport, StatisticsPerField) {
  LatencyRun run;
  run.name = "t";
  run.wall_ms = 500.0;
  for (int i = 1; i <= 5; ++i) run.queries.push_back(record(i, i * 2.0, 0.01 * i, 0.1, 1.0, 0.1));
  const auto s = summarize(run);
  EXPECT_EQ(s.queries, 5u);
  EXPECT_DOUBLE_EQ(s.throughput_qps, 10.0);
  EXPECT_DOUBLE_EQ(s.latency.min, 2.0);
  EXPECT_DOUBLE_EQ(s.latency.max, 10.0);
  EXPECT_DOUBLE_EQ(s.latency.median, 6.0);
  EXPECT_NEAR(s.enqueue.median, 0.03, 1e-12);
  EXPECT_DOUBLE_EQ(s.compute.mean, 1.0);
  EXPECT_DOUBLE_EQ(s.total_gpu_compute_ms, 5.0);
  EXPECT_TRUE(s.warnings.empty()) << s.warnings.front();
}

TEST(LatencyReport, SharedBatchComputeCountedOnce) {
  LatencyRun run;
  run.wall_ms = 1.0;
  for (int i = 0; i < 4; ++i) {
    auto q = record(0, 1, 0.01, 0.1, 2.0, 0.1);
    q.batch = 4;
    q.items = 3;
    run.queries.push_back(q);
  }
  const auto s = summarize(run);
  EXPECT_DOUBLE_EQ(s.total_gpu_compute_ms, 2.0);
  EXPECT_DOUBLE_EQ(s.mean_batch, 4.0);
  EXPECT_EQ(s.items, 12u);
  EXPECT_DOUBLE_EQ(s.throughput_items_per_s, 12000.0);
}

TEST(LatencyReport, WarnsWhenHostBound) {
  LatencyRun run;
  for (int i = 0; i < 5; ++i) run.queries.push_back(record(0, 1, 0.9, 0.01, 1.0, 0.01));
  const auto s = summarize(run);
  EXPECT_TRUE(has_warning(s, "host-bound"));
  EXPECT_FALSE(has_warning(s, "copy-bound"));
}

TEST(LatencyReport, WarnsWhenCopiesExceedCompute) {
  LatencyRun run;
  for (int i = 0; i < 5; ++i) run.queries.push_back(record(0, 1, 0.01, 0.6, 1.0, 0.6));
  EXPECT_TRUE(has_warning(summarize(run), "copy-bound"));
}

TEST(LatencyReport, WarnsWhenComputeVaries) {
  LatencyRun run;
  for (int i = 0; i < 6; ++i) run.queries.push_back(record(0, 1, 0.01, 0.01, i % 2 == 0 ? 1.0 : 1.5, 0.01));
  EXPECT_TRUE(has_warning(summarize(run), "unstable"));
  WarningThresholds lenient;
  lenient.unstable_cv = 0.5;
  EXPECT_FALSE(has_warning(summarize(run, lenient), "unstable"));
}

TEST(LatencyReport, HostBackendWithoutGpuTimes) {
  LatencyRun run;
  run.device = "host";
  QueryRecord q;
  q.complete_ms = 2.0;
  run.queries = {q, q};
  const auto s = summarize(run);
  EXPECT_EQ(s.compute.count, 0u);
  EXPECT_TRUE(s.warnings.empty());
  const auto text = format_report(run, s);
  EXPECT_NE(text.find("compute   not measured"), std::string::npos) << text;
  EXPECT_NE(text.find("spin-wait"), std::string::npos);
}

TEST(LatencyReport, ReportStatesSyncAndLimits) {
  LatencyRun run;
  run.name = "mlp";
  run.device = "GPU X";
  run.sync = SyncMode::blocking;
  run.limits.warmup_queries = 10;
  run.limits.duration_limit_ms = 3000;
  run.limits.iteration_limit = 500;
  run.queries.push_back(record(0, 1, 0.01, 0.1, 1.0, 0.1));
  const auto text = format_report(run, summarize(run));
  EXPECT_NE(text.find("blocking-sync"), std::string::npos) << text;
  EXPECT_NE(text.find("warm-up 10 queries"), std::string::npos) << text;
  EXPECT_NE(text.find("duration limit 3000 ms"), std::string::npos) << text;
  EXPECT_NE(text.find("iteration limit 500"), std::string::npos) << text;
  EXPECT_NE(text.find("GPU X"), std::string::npos);
}

TEST(LatencyReport, JsonHasSummaryAndEveryQuery) {
  LatencyRun run;
  run.name = "j";
  run.wall_ms = 10;
  run.queries.push_back(record(1, 2, 0.01, 0.1, 1.0, 0.1));
  QueryRecord host_only;
  host_only.submit_ms = 5;
  host_only.complete_ms = 6;
  run.queries.push_back(host_only);
  const auto j = report_json(run, summarize(run));
  EXPECT_EQ(j["queries"].size(), 2u);
  EXPECT_DOUBLE_EQ(j["queries"][0]["submit_ms"].get<double>(), 1.0);
  EXPECT_TRUE(j["queries"][1]["compute_ms"].is_null());
  EXPECT_EQ(j["summary"]["latency_ms"]["count"].get<int>(), 2);
  EXPECT_EQ(j["summary"]["compute_ms"]["count"].get<int>(), 1);
  EXPECT_EQ(j["sync"], "spin-wait");
  EXPECT_FALSE(report_json(run, summarize(run), false).contains("queries"));
}

}  // namespace
}  // namespace streampipe::report
