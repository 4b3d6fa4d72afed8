// SPDX-License-Identifier: Apache-2.0
// Which stage bound a gray run (see gray_bound.hpp).

#include "streampipe/tools/gray_bound.hpp"

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
  const bool gpu = s.backend == "gpu";

  // Workers: as the run resolved them; for a summary without them, the most host stages seen
  // at once (all of them, when the workers were the bound).
  const int workers = s.threads > 0 ? s.threads : std::max(1, most_at_once(s.records));
  const double worker_capacity_ms = workers * s.wall_ms;
  b.decode_share = t.decode_ms / worker_capacity_ms;
  b.encode_share = t.encode_ms / worker_capacity_ms;
  b.stages.push_back({"host workers", b.decode_share + b.encode_share, workers, t.decode_ms + t.encode_ms});

  std::set<int> devices;
  std::set<std::pair<int, int>> lanes_seen;
  for (const auto& r : s.records)
    if (r.lane >= 0) {
      devices.insert(r.device);
      lanes_seen.emplace(r.device, r.lane);
    }
  if (gpu) {
    double busy = 0;
    for (const int d : devices) {
      std::vector<pipeline::StageRecord> mine;
      for (const auto& r : s.records)
        if (r.lane >= 0 && r.device == d) mine.push_back(r);
      busy += split_time(mine, s.wall_ms).device_busy_ms;
    }
    const int n = std::max<int>(1, static_cast<int>(devices.size()));
    b.stages.push_back({"device", busy / (n * s.wall_ms), n, busy});
  } else {
    int lanes = s.lanes > 0 ? s.lanes * std::max<int>(1, static_cast<int>(devices.size()))
                            : static_cast<int>(lanes_seen.size());
    lanes = std::max(1, lanes);
    const double busy = t.h2d_ms + t.compute_ms + t.d2h_ms;
    b.stages.push_back({"host lanes", busy / (lanes * s.wall_ms), lanes, busy});
  }
  b.bound = b.stages[1].share > b.stages[0].share ? 1 : 0;
  return b;
}

}  // namespace streampipe::tools::gray
