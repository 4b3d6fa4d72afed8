// SPDX-License-Identifier: Apache-2.0
#pragma once
// A trtexec-style latency/throughput report built from plain per-query records, so any
// tool (the batcher, the pipeline engine, a benchmark loop) can feed it. A query is one
// unit of work a client waits for (a request, an item, a chunk). Host timestamps are in
// milliseconds from any common origin; GPU times are event intervals in milliseconds and
// are optional (a host backend has none). Every statistic comes from report::summarize.
//
// Warnings (the trtexec ones): host-bound when the median enqueue time reaches
// `host_bound_ratio` of the median compute time; copy-bound when median H2D + D2H exceeds
// median compute; unstable when compute time's coefficient of variation exceeds
// `unstable_cv`.

#include "streampipe/report/statistics.hpp"

#include <nlohmann/json_fwd.hpp>

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace streampipe::report {

struct QueryRecord {
  double submit_ms = 0.0;         // the client handed the query over
  double enqueue_begin_ms = 0.0;  // the host began enqueueing its work
  double enqueue_end_ms = 0.0;    // ... and finished (enqueue time = end - begin)
  double complete_ms = 0.0;       // the client saw the result (latency = complete - submit)
  std::optional<double> h2d_ms, compute_ms, d2h_ms;  // GPU event intervals
  std::size_t items = 1;          // e.g. rows of a request; throughput counts these too
  std::size_t batch = 1;          // queries that shared the GPU work (1 = unbatched)
};

enum class SyncMode { spin, blocking };
[[nodiscard]] const char* to_string(SyncMode mode) noexcept;

struct RunLimits {
  std::size_t warmup_queries = 0;      // untimed queries before the measured ones
  double warmup_ms = 0.0;              // or a warm-up duration
  double duration_limit_ms = 0.0;      // 0: no limit
  std::size_t iteration_limit = 0;     // 0: no limit
};

struct LatencyRun {
  std::string name;                    // what was measured ("mlp 4x4096, batch<=64")
  std::string device;                  // device name ("host" for the host backend)
  SyncMode sync = SyncMode::spin;
  RunLimits limits;
  double wall_ms = 0.0;                // host wall time of the measured phase
  std::vector<QueryRecord> queries;    // measured queries only
};

struct WarningThresholds {
  double host_bound_ratio = 0.8;
  double unstable_cv = 0.05;
};

struct LatencySummary {
  std::size_t queries = 0;
  std::size_t items = 0;
  double wall_ms = 0.0;
  double throughput_qps = 0.0;         // queries per second of wall time
  double throughput_items_per_s = 0.0;
  double mean_batch = 0.0;
  Summary latency, enqueue, h2d, compute, d2h;  // ms; GPU ones have count 0 when unmeasured
  double total_gpu_compute_ms = 0.0;   // sum of compute over distinct batches (see .cpp)
  std::vector<std::string> warnings;
};

[[nodiscard]] LatencySummary summarize(const LatencyRun& run, const WarningThresholds& thresholds = {});

// The human-readable report (several lines, ends with a newline).
[[nodiscard]] std::string format_report(const LatencyRun& run, const LatencySummary& summary);

void to_json(nlohmann::json& j, const LatencySummary& s);
void to_json(nlohmann::json& j, const QueryRecord& q);
// {"name", "device", "sync", "limits", "summary", "queries": [every record]}
[[nodiscard]] nlohmann::json report_json(const LatencyRun& run, const LatencySummary& summary,
                                         bool include_queries = true);

}  // namespace streampipe::report
