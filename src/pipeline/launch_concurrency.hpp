// SPDX-License-Identifier: Apache-2.0
#pragma once
// How many launches of an operation a GPU should have in flight at once, judged from the
// operation run alone and on several streams at once. A launch that fills the GPU gains
// nothing from company: K of them take K times as long. One that fills a fraction of it (a
// single block, a few) runs nearly as fast beside others, up to what the GPU holds at once
// (its SMs' resident blocks, and the grids it runs concurrently): then each such launch
// needs a lane of its own, as a hand-written stream per item would have. Pure.

#include <cstddef>
#include <span>
#include <string>

namespace streampipe::pipeline::detail {

// `streams` launches, one per stream, all at once took `ms` (wall, first start to last end).
struct ConcurrencyProbe {
  int streams = 1;
  double ms = 0;
};

struct ConcurrencyPlan {
  int lanes = 0;           // 0: the launch fills the GPU; concurrency does not pay
  double parallel = 1;     // launches that ran at once at the chosen width (effective)
  std::string reason;      // one clause for the planner's reason
};

// `one_ms`: one launch alone. The width whose launches ran most at once (K x one / ms) is
// taken; when that is the widest probed and still ran at least 3/4 at once, the GPU may
// hold more and every item gets a lane. Never more lanes than `items` or `max_lanes`. When
// no width ran even twice as fast as one launch after another, lanes is 0.
[[nodiscard]] ConcurrencyPlan plan_concurrency(double one_ms, std::span<const ConcurrencyProbe> probes,
                                               std::size_t items, int max_lanes);

}  // namespace streampipe::pipeline::detail
