// SPDX-License-Identifier: Apache-2.0
#include "launch_concurrency.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace streampipe::pipeline::detail {

ConcurrencyPlan plan_concurrency(double one_ms, std::span<const ConcurrencyProbe> probes, std::size_t items,
                                 int max_lanes) {
  ConcurrencyPlan plan;
  if (one_ms <= 0 || probes.empty() || items < 2 || max_lanes < 2) {
    plan.reason = "no concurrency probe";
    return plan;
  }
  std::string seen;
  int width = 0;
  double parallel = 1;
  for (const ConcurrencyProbe& p : probes) {
    if (p.streams < 2 || p.ms <= 0) continue;
    const double at_once = p.streams * one_ms / p.ms;
    seen += fmt::format("{}{} at once {:.3f} ms", seen.empty() ? "" : ", ", p.streams, p.ms);
    if (at_once > parallel) {
      width = p.streams;
      parallel = at_once;
    }
  }
  if (width == 0 || parallel < 2) {
    plan.reason = fmt::format("one launch {:.3f} ms, {}: it fills the GPU", one_ms, seen);
    return plan;
  }
  // The widest width probed still ran nearly all at once: the GPU may hold more, so as many
  // lanes as items, up to the cap.
  const bool widest = std::all_of(probes.begin(), probes.end(), [&](const ConcurrencyProbe& p) { return p.streams <= width; });
  const std::size_t want = widest && parallel >= 0.75 * width ? items : static_cast<std::size_t>(width);
  plan.lanes = static_cast<int>(std::clamp<std::size_t>(std::min(want, items), 2, static_cast<std::size_t>(max_lanes)));
  plan.parallel = parallel;
  plan.reason = fmt::format("one launch {:.3f} ms, {}: a launch fills a fraction of the GPU -> a lane per item, {} lanes",
                            one_ms, seen, plan.lanes);
  return plan;
}

}  // namespace streampipe::pipeline::detail
