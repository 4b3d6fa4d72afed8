// SPDX-License-Identifier: Apache-2.0
#pragma once
// How a resource moved along a soak run: its level sampled at item counts, and the slope of
// the least-squares line through the samples taken after warm-up, per 10^5 items. A flat
// resource has a slope near 0 whatever its level; a leak of b bytes per item shows as
// b * 10^5. Pure: no I/O.

#include <cstddef>
#include <span>

namespace streampipe::bench::soak {

struct Sample {
  double items = 0;  // items submitted when it was taken
  double value = 0;  // the resource's level then (bytes, threads...)
};

struct Trend {
  double slope_per_1e5 = 0;  // of the samples after warm-up, in the value's unit per 10^5 items
  double first = 0;          // the first sample after warm-up
  double last = 0;
  double max = 0;            // over every sample, warm-up included
  std::size_t fitted = 0;    // samples after warm-up
};

// Fits the samples with items >= warmup_items. Throws std::invalid_argument when fewer than
// two of them remain, or when they all lie at one item count.
[[nodiscard]] Trend fit_trend(std::span<const Sample> samples, double warmup_items);

}  // namespace streampipe::bench::soak
