// SPDX-License-Identifier: Apache-2.0
#include "streampipe/report/latency_report.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <vector>

namespace streampipe::report {

const char* to_string(SyncMode mode) noexcept {
  return mode == SyncMode::blocking ? "blocking-sync" : "spin-wait";
}

namespace {

template <typename F>
Summary summarize_field(const std::vector<QueryRecord>& queries, F field) {
  std::vector<double> values;
  values.reserve(queries.size());
  for (const auto& q : queries)
    if (const std::optional<double> v = field(q)) values.push_back(*v);
  return summarize(values);
}

std::string line(const char* label, const Summary& s) {
  if (s.count == 0) return fmt::format("  {:<9} not measured\n", label);
  return fmt::format(
      "  {:<9} min {:.4f} | max {:.4f} | mean {:.4f} | median {:.4f} | p90 {:.4f} | p95 {:.4f} | "
      "p99 {:.4f} ms\n",
      label, s.min, s.max, s.mean, s.median, s.p90, s.p95, s.p99);
}

}  // namespace

LatencySummary summarize(const LatencyRun& run, const WarningThresholds& thresholds) {
  LatencySummary s;
  const auto& q = run.queries;
  s.queries = q.size();
  s.wall_ms = run.wall_ms;
  double batch_sum = 0.0;
  for (const auto& r : q) {
    s.items += r.items;
    batch_sum += static_cast<double>(r.batch);
    // A batch's compute time is shared by its queries: each contributes its share, so the
    // total counts every batch once when all of its queries are recorded.
    if (r.compute_ms) s.total_gpu_compute_ms += *r.compute_ms / static_cast<double>(std::max<std::size_t>(r.batch, 1));
  }
  if (!q.empty()) s.mean_batch = batch_sum / static_cast<double>(q.size());
  if (run.wall_ms > 0.0) {
    s.throughput_qps = static_cast<double>(s.queries) / (run.wall_ms / 1e3);
    s.throughput_items_per_s = static_cast<double>(s.items) / (run.wall_ms / 1e3);
  }
  s.latency = summarize_field(q, [](const QueryRecord& r) -> std::optional<double> { return r.complete_ms - r.submit_ms; });
  s.enqueue = summarize_field(q, [](const QueryRecord& r) -> std::optional<double> { return r.enqueue_end_ms - r.enqueue_begin_ms; });
  s.h2d = summarize_field(q, [](const QueryRecord& r) { return r.h2d_ms; });
  s.compute = summarize_field(q, [](const QueryRecord& r) { return r.compute_ms; });
  s.d2h = summarize_field(q, [](const QueryRecord& r) { return r.d2h_ms; });

  if (s.compute.count > 0 && s.compute.median > 0.0) {
    if (s.enqueue.count > 0 && s.enqueue.median >= thresholds.host_bound_ratio * s.compute.median)
      s.warnings.push_back(fmt::format(
          "host-bound: median enqueue time {:.4f} ms is {:.0f}% of median GPU compute time {:.4f} ms; "
          "the GPU waits for the host (try CUDA graphs, larger batches or more lanes)",
          s.enqueue.median, 100.0 * s.enqueue.median / s.compute.median, s.compute.median));
    const double copies = (s.h2d.count > 0 ? s.h2d.median : 0.0) + (s.d2h.count > 0 ? s.d2h.median : 0.0);
    if (copies > s.compute.median)
      s.warnings.push_back(fmt::format(
          "copy-bound: median H2D + D2H {:.4f} ms exceeds median GPU compute time {:.4f} ms; the "
          "link, not the SMs, sets the pace (overlap copies across lanes, send less data)",
          copies, s.compute.median));
    if (s.compute.count > 1 && s.compute.mean > 0.0) {
      const double cv = s.compute.stddev / s.compute.mean;
      if (cv > thresholds.unstable_cv)
        s.warnings.push_back(fmt::format(
            "unstable: GPU compute time varies with a coefficient of variation of {:.1f}% (> {:.1f}%); "
            "clocks, other work on the GPU or varying batch sizes make the figures less reliable",
            100.0 * cv, 100.0 * thresholds.unstable_cv));
    }
  }
  return s;
}

std::string format_report(const LatencyRun& run, const LatencySummary& s) {
  std::string out = fmt::format("=== {} on {} ===\n", run.name, run.device.empty() ? "?" : run.device);
  std::string limits;
  if (run.limits.warmup_queries > 0) limits += fmt::format("warm-up {} queries", run.limits.warmup_queries);
  if (run.limits.warmup_ms > 0.0)
    limits += fmt::format("{}warm-up {:.0f} ms", limits.empty() ? "" : ", ", run.limits.warmup_ms);
  if (run.limits.duration_limit_ms > 0.0)
    limits += fmt::format("{}duration limit {:.0f} ms", limits.empty() ? "" : ", ", run.limits.duration_limit_ms);
  if (run.limits.iteration_limit > 0)
    limits += fmt::format("{}iteration limit {}", limits.empty() ? "" : ", ", run.limits.iteration_limit);
  out += fmt::format("  sync: {} | {}\n", to_string(run.sync), limits.empty() ? "no warm-up, no limits" : limits);
  out += fmt::format("  throughput: {:.1f} queries/s ({:.1f} items/s), {} queries, mean batch {:.2f}\n",
                     s.throughput_qps, s.throughput_items_per_s, s.queries, s.mean_batch);
  out += line("latency", s.latency);
  out += line("enqueue", s.enqueue);
  out += line("H2D", s.h2d);
  out += line("compute", s.compute);
  out += line("D2H", s.d2h);
  out += fmt::format("  total host wall time {:.3f} ms, total GPU compute time {:.3f} ms\n", s.wall_ms,
                     s.total_gpu_compute_ms);
  for (const auto& w : s.warnings) out += fmt::format("  warning: {}\n", w);
  return out;
}

void to_json(nlohmann::json& j, const LatencySummary& s) {
  j = nlohmann::json{{"queries", s.queries},
                     {"items", s.items},
                     {"wall_ms", s.wall_ms},
                     {"throughput_qps", s.throughput_qps},
                     {"throughput_items_per_s", s.throughput_items_per_s},
                     {"mean_batch", s.mean_batch},
                     {"latency_ms", s.latency},
                     {"enqueue_ms", s.enqueue},
                     {"h2d_ms", s.h2d},
                     {"compute_ms", s.compute},
                     {"d2h_ms", s.d2h},
                     {"total_gpu_compute_ms", s.total_gpu_compute_ms},
                     {"warnings", s.warnings}};
}

void to_json(nlohmann::json& j, const QueryRecord& q) {
  j = nlohmann::json{{"submit_ms", q.submit_ms},
                     {"enqueue_begin_ms", q.enqueue_begin_ms},
                     {"enqueue_end_ms", q.enqueue_end_ms},
                     {"complete_ms", q.complete_ms},
                     {"items", q.items},
                     {"batch", q.batch}};
  j["h2d_ms"] = q.h2d_ms ? nlohmann::json(*q.h2d_ms) : nlohmann::json(nullptr);
  j["compute_ms"] = q.compute_ms ? nlohmann::json(*q.compute_ms) : nlohmann::json(nullptr);
  j["d2h_ms"] = q.d2h_ms ? nlohmann::json(*q.d2h_ms) : nlohmann::json(nullptr);
}

nlohmann::json report_json(const LatencyRun& run, const LatencySummary& summary, bool include_queries) {
  nlohmann::json j{{"name", run.name},
                   {"device", run.device},
                   {"sync", to_string(run.sync)},
                   {"limits",
                    {{"warmup_queries", run.limits.warmup_queries},
                     {"warmup_ms", run.limits.warmup_ms},
                     {"duration_limit_ms", run.limits.duration_limit_ms},
                     {"iteration_limit", run.limits.iteration_limit}}},
                   {"summary", summary}};
  if (include_queries) j["queries"] = run.queries;
  return j;
}

}  // namespace streampipe::report
