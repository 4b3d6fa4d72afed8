// SPDX-License-Identifier: Apache-2.0
#include "timing.hpp"

#include "streampipe/pipeline/timeline_latency.hpp"

#include <algorithm>
#include <optional>
#include <utility>
#include <vector>

namespace streampipe::tools::mandelbrot {
namespace {

using pipeline::Stage;
using pipeline::StageRecord;

// The records of `stage` (on the GPUs alone with `gpus_only`) as start/end intervals.
std::vector<std::pair<double, double>> intervals(std::span<const StageRecord> records, Stage stage, bool gpus_only) {
  std::vector<std::pair<double, double>> out;
  for (const auto& r : records)
    if (r.stage == stage && (!gpus_only || r.device >= 0)) out.emplace_back(r.start_ms, r.end_ms);
  return out;
}

std::optional<double> span_ms(const std::vector<std::pair<double, double>>& v) {
  if (v.empty()) return std::nullopt;
  double first = v.front().first, last = v.front().second;
  for (const auto& [start, end] : v) first = std::min(first, start), last = std::max(last, end);
  return last - first;
}

std::optional<double> busy_ms(std::vector<std::pair<double, double>> v) {
  if (v.empty()) return std::nullopt;
  std::sort(v.begin(), v.end());
  double busy = 0, start = v.front().first, end = v.front().second;
  for (const auto& [s, e] : v) {
    if (s > end) {
      busy += end - start;
      start = s;
    }
    end = std::max(end, e);
  }
  return busy + (end - start);
}

}  // namespace

PartTiming part_timing(std::span<const StageRecord> records, std::span<const pipeline::ItemResult> results,
                       bool gpu_stages) {
  PartTiming t;
  t.compute_ms = span_ms(intervals(records, Stage::compute, false)).value_or(0.0);
  const pipeline::TimelineQueries bands = pipeline::timeline_queries(records, results, false);
  if (bands.queries.empty()) return t;
  const double origin = bands.first_submit_ms;
  report::QueryRecord& q = t.query;
  q.submit_ms = 0;
  q.enqueue_begin_ms = bands.queries.front().enqueue_begin_ms;
  q.enqueue_end_ms = bands.queries.front().enqueue_end_ms;
  for (const auto& b : bands.queries) {
    q.enqueue_begin_ms = std::min(q.enqueue_begin_ms, b.enqueue_begin_ms);
    q.enqueue_end_ms = std::max(q.enqueue_end_ms, b.enqueue_end_ms);
  }
  q.enqueue_begin_ms -= origin;
  q.enqueue_end_ms -= origin;
  q.complete_ms = bands.last_complete_ms - origin;
  if (gpu_stages) {
    q.h2d_ms = busy_ms(intervals(records, Stage::h2d, true));
    q.compute_ms = span_ms(intervals(records, Stage::compute, true));
    q.d2h_ms = busy_ms(intervals(records, Stage::d2h, true));
  }
  return t;
}

}  // namespace streampipe::tools::mandelbrot
