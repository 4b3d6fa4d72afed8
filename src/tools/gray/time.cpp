// SPDX-License-Identifier: Apache-2.0
// Where a gray run's time went, from the engine's timeline records (see tools/gray/convert.hpp).

#include "streampipe/tools/gray/convert.hpp"

#include <algorithm>
#include <utility>

namespace streampipe::tools::gray {
namespace {

// Length of the union of intervals: the time at least one of them was running.
double union_ms(std::vector<std::pair<double, double>> intervals) {
  std::sort(intervals.begin(), intervals.end());
  double total = 0, start = 0, end = 0;
  bool open = false;
  for (const auto& [s, e] : intervals) {
    if (!open || s > end) {
      if (open) total += end - start;
      start = s;
      end = e;
      open = true;
    } else {
      end = std::max(end, e);
    }
  }
  if (open) total += end - start;
  return total;
}

}  // namespace

TimeSplit split_time(std::span<const pipeline::StageRecord> records, double wall_ms) {
  using pipeline::Stage;
  TimeSplit t;
  t.wall_ms = wall_ms;
  std::vector<std::pair<double, double>> device, decode, encode;
  for (const auto& r : records) {
    const double d = std::max(0.0, r.end_ms - r.start_ms);
    switch (r.stage) {
      case Stage::stage_in: t.decode_ms += d; decode.emplace_back(r.start_ms, r.end_ms); break;
      case Stage::stage_out: t.encode_ms += d; encode.emplace_back(r.start_ms, r.end_ms); break;
      case Stage::h2d: t.h2d_ms += d; device.emplace_back(r.start_ms, r.end_ms); break;
      case Stage::compute: t.compute_ms += d; device.emplace_back(r.start_ms, r.end_ms); break;
      case Stage::d2h: t.d2h_ms += d; device.emplace_back(r.start_ms, r.end_ms); break;
      case Stage::queue: break;
    }
  }
  t.device_busy_ms = union_ms(std::move(device));
  t.decode_busy_ms = union_ms(std::move(decode));
  t.encode_busy_ms = union_ms(std::move(encode));
  return t;
}

}  // namespace streampipe::tools::gray
