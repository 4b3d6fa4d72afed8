// SPDX-License-Identifier: Apache-2.0
#include "streampipe/pipeline/timeline.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <limits>

namespace streampipe::pipeline {

const char* stage_name(Stage s) noexcept {
  switch (s) {
    case Stage::queue: return "queue";
    case Stage::stage_in: return "stage in";
    case Stage::h2d: return "H2D";
    case Stage::compute: return "compute";
    case Stage::d2h: return "D2H";
    case Stage::stage_out: return "stage out";
  }
  return "?";
}

double Timeline::now_ms() noexcept {
  static const auto epoch = std::chrono::steady_clock::now();
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - epoch).count();
}

void Timeline::add(const StageRecord& r) {
  std::lock_guard lock(mutex_);
  records_.push_back(r);
}

void Timeline::clear() {
  std::lock_guard lock(mutex_);
  records_.clear();
}

std::vector<StageRecord> Timeline::records() const {
  std::lock_guard lock(mutex_);
  return records_;
}

namespace {

// Total length of the union of intervals: how long a resource (a copy engine, the SMs, the
// host workers) was busy, however many records overlapped.
double union_length(std::vector<std::pair<double, double>> iv) {
  std::sort(iv.begin(), iv.end());
  double total = 0, cur_start = 0, cur_end = -std::numeric_limits<double>::infinity();
  for (const auto& [a, b] : iv) {
    if (a > cur_end) {
      if (cur_end > cur_start) total += cur_end - cur_start;
      cur_start = a;
      cur_end = b;
    } else {
      cur_end = std::max(cur_end, b);
    }
  }
  if (cur_end > cur_start) total += cur_end - cur_start;
  return total;
}

}  // namespace

TimelineReport Timeline::report() const {
  const auto recs = records();
  TimelineReport rep;
  if (recs.empty()) return rep;
  double t0 = std::numeric_limits<double>::infinity(), t1 = -t0;
  for (const auto& r : recs) {
    t0 = std::min(t0, r.start_ms);
    t1 = std::max(t1, r.end_ms);
  }
  rep.wall_ms = t1 - t0;
  std::size_t max_item = 0;
  for (Stage st : {Stage::stage_in, Stage::h2d, Stage::compute, Stage::d2h, Stage::stage_out}) {
    std::vector<double> durations;
    std::vector<std::pair<double, double>> iv;
    StageStats ss{st, {}, 0, 0};
    for (const auto& r : recs) {
      if (r.stage != st) continue;
      durations.push_back(r.end_ms - r.start_ms);
      iv.emplace_back(r.start_ms, r.end_ms);
      ss.bytes += r.bytes;
      max_item = std::max(max_item, r.first_item + r.items);
    }
    if (durations.empty()) continue;
    ss.duration_ms = report::summarize(durations);
    ss.busy_ms = union_length(std::move(iv));
    if (st == Stage::h2d) rep.bytes_in = ss.bytes;
    if (st == Stage::d2h) rep.bytes_out = ss.bytes;
    rep.stages.push_back(ss);
  }
  rep.items = max_item;
  // Host staging runs on several threads at once, so its union understates its load but is
  // still the time it kept the pipeline waiting; the device stages are single resources
  // (one copy engine per direction) or share the SMs.
  const auto bottleneck = std::max_element(rep.stages.begin(), rep.stages.end(),
                                           [](const auto& a, const auto& b) { return a.busy_ms < b.busy_ms; });
  if (bottleneck != rep.stages.end() && rep.wall_ms > 0) {
    rep.bottleneck = bottleneck->stage;
    rep.overlap_efficiency = bottleneck->busy_ms / rep.wall_ms;
  }
  if (rep.wall_ms > 0) {
    rep.h2d_gbps = static_cast<double>(rep.bytes_in) / (rep.wall_ms * 1e6);
    rep.d2h_gbps = static_cast<double>(rep.bytes_out) / (rep.wall_ms * 1e6);
  }
  return rep;
}

void to_json(nlohmann::json& j, const TimelineReport& r) {
  j = nlohmann::json{{"wall_ms", r.wall_ms},
                     {"items", r.items},
                     {"bytes_in", r.bytes_in},
                     {"bytes_out", r.bytes_out},
                     {"h2d_gbps", r.h2d_gbps},
                     {"d2h_gbps", r.d2h_gbps},
                     {"bottleneck", stage_name(r.bottleneck)},
                     {"overlap_efficiency", r.overlap_efficiency}};
  auto& stages = j["stages"];
  stages = nlohmann::json::array();
  for (const auto& s : r.stages)
    stages.push_back({{"stage", stage_name(s.stage)}, {"duration_ms", s.duration_ms}, {"busy_ms", s.busy_ms}, {"bytes", s.bytes}});
}

}  // namespace streampipe::pipeline
