// SPDX-License-Identifier: Apache-2.0
#include "soak/trend.hpp"

#include <algorithm>
#include <stdexcept>

namespace streampipe::bench::soak {

Trend fit_trend(std::span<const Sample> samples, double warmup_items) {
  Trend t;
  double n = 0, sx = 0, sy = 0;
  bool any = false;
  for (const auto& s : samples) {
    t.max = any ? std::max(t.max, s.value) : s.value;
    any = true;
    if (s.items < warmup_items) continue;
    if (t.fitted == 0) t.first = s.value;
    t.last = s.value;
    ++t.fitted;
    n += 1;
    sx += s.items;
    sy += s.value;
  }
  if (t.fitted < 2) throw std::invalid_argument("fit_trend: fewer than two samples after warm-up");
  // Centred sums: item counts reach 10^6 and byte counts 10^10, so raw sums of squares
  // would lose the slope to rounding.
  const double mx = sx / n, my = sy / n;
  double sxx = 0, sxy = 0;
  for (const auto& s : samples) {
    if (s.items < warmup_items) continue;
    sxx += (s.items - mx) * (s.items - mx);
    sxy += (s.items - mx) * (s.value - my);
  }
  if (sxx == 0) throw std::invalid_argument("fit_trend: every sample after warm-up lies at one item count");
  t.slope_per_1e5 = sxy / sxx * 1e5;
  return t;
}

}  // namespace streampipe::bench::soak
