// SPDX-License-Identifier: Apache-2.0
#pragma once
// Every stage of every item, on one clock (Timeline::now_ms, shared by every engine of the
// process, so that records of several engines and of work done beside them line up). Device
// stages come from CUDA events placed on the host clock through a reference event; host
// stages from steady_clock. The report derives per-stage statistics, achieved bandwidth and
// overlap efficiency; exports are Chrome-trace JSON (opens in Perfetto) and an SVG Gantt
// chart with one row per copy direction, per lane and for the host workers.

#include "streampipe/report/statistics.hpp"

#include <nlohmann/json_fwd.hpp>

#include <cstddef>
#include <mutex>
#include <string>
#include <vector>

namespace streampipe::pipeline {

enum class Stage { queue, stage_in, h2d, compute, d2h, stage_out };
[[nodiscard]] const char* stage_name(Stage s) noexcept;

struct StageRecord {
  Stage stage;
  int lane = -1;             // -1 for host-worker stages
  std::size_t first_item = 0;
  std::size_t items = 1;     // a batch covers [first_item, first_item + items)
  double start_ms = 0;
  double end_ms = 0;
  std::size_t bytes = 0;
  int device = -1;           // the GPU of a device stage (kCpuDevice: the CPU's lanes); -1 for host stages
};

struct StageStats {
  Stage stage;
  report::Summary duration_ms;  // per record
  double busy_ms = 0;           // union of its intervals: the time the resource was in use
  std::size_t bytes = 0;
};

struct TimelineReport {
  double wall_ms = 0;
  std::size_t items = 0;
  std::size_t bytes_in = 0;
  std::size_t bytes_out = 0;
  double h2d_gbps = 0;       // bytes_in / wall
  double d2h_gbps = 0;
  std::vector<StageStats> stages;
  Stage bottleneck = Stage::h2d;
  double overlap_efficiency = 0;  // bottleneck busy time / wall time
};

class Timeline {
 public:
  // The records' clock: milliseconds since a fixed point early in the process (steady).
  [[nodiscard]] static double now_ms() noexcept;

  void add(const StageRecord& r);
  void clear();
  [[nodiscard]] std::vector<StageRecord> records() const;
  [[nodiscard]] TimelineReport report() const;

  // Chrome trace event format: {"traceEvents": [...]} with one track per row.
  [[nodiscard]] nlohmann::json chrome_trace(const std::string& process_name) const;
  [[nodiscard]] std::string gantt_svg(const std::string& title) const;

 private:
  mutable std::mutex mutex_;
  std::vector<StageRecord> records_;
};

void to_json(nlohmann::json& j, const TimelineReport& r);

}  // namespace streampipe::pipeline
