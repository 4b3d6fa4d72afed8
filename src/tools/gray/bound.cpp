// SPDX-License-Identifier: Apache-2.0
// Which stage bound a gray run (see tools/gray/bound.hpp).

#include "streampipe/tools/gray/bound.hpp"

#include <algorithm>
#include <set>

namespace streampipe::tools::gray {

namespace {

// The most host-worker stages running at the same moment.
int most_at_once(const std::vector<pipeline::StageRecord>& records) {
  std::vector<std::pair<double, int>> edges;  // an end sorts before a start at the same time
  for (const auto& r : records)
    if (r.stage == pipeline::Stage::stage_in || r.stage == pipeline::Stage::stage_out) {
      edges.emplace_back(r.start_ms, 1);
      edges.emplace_back(r.end_ms, -1);
    }
  std::sort(edges.begin(), edges.end());
  int now = 0, most = 0;
  for (const auto& [at, step] : edges) most = std::max(most, now += step);
  return most;
}

}  // namespace

RunBound run_bound(const RunSummary& s) {
  RunBound b;
  if (s.records.empty() || s.wall_ms <= 0) return b;
  const TimeSplit t = split_time(s.records, s.wall_ms);
  // Workers: as the run resolved them; for a summary without them, the most host stages seen
  // at once (all of them, when the workers were the bound).
  const int workers = s.threads > 0 ? s.threads : std::max(1, most_at_once(s.records));
  const double worker_capacity_ms = workers * s.wall_ms;
  b.decode_share = t.decode_ms / worker_capacity_ms;
  b.encode_share = t.encode_ms / worker_capacity_ms;
  b.stages.push_back({"host workers", b.decode_share + b.encode_share, workers, t.decode_ms + t.encode_ms});

  // GPUs: each device busy when any of its lanes copies or computes. The CPU's lanes: each
  // lane a thread of its own.
  std::set<int> gpus;
  std::set<int> cpu_lanes_seen;
  for (const auto& r : s.records) {
    if (r.lane < 0) continue;
    if (r.device >= 0) gpus.insert(r.device);
    else cpu_lanes_seen.insert(r.lane);
  }
  if (!gpus.empty()) {
    double busy = 0;
    for (const int d : gpus) {
      std::vector<pipeline::StageRecord> mine;
      for (const auto& r : s.records)
        if (r.lane >= 0 && r.device == d) mine.push_back(r);
      busy += split_time(mine, s.wall_ms).device_busy_ms;
    }
    const int n = static_cast<int>(gpus.size());
    b.stages.push_back({"device", busy / (n * s.wall_ms), n, busy});
  }
  if (!cpu_lanes_seen.empty()) {
    const int lanes = std::max(s.cpu_lanes, static_cast<int>(cpu_lanes_seen.size()));
    double busy = 0;
    for (const auto& r : s.records)
      if (r.lane >= 0 && r.device < 0) busy += r.end_ms - r.start_ms;
    b.stages.push_back({"host lanes", busy / (lanes * s.wall_ms), lanes, busy});
  }
  b.bound = 0;
  for (std::size_t i = 1; i < b.stages.size(); ++i)
    if (b.stages[i].share > b.stages[b.bound].share) b.bound = i;
  return b;
}

}  // namespace streampipe::tools::gray
