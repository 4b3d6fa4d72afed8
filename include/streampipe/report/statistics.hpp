// SPDX-License-Identifier: Apache-2.0
#pragma once
// Summary statistics of a sample (latencies, stage times, bandwidths): the figures a
// trtexec-style report prints. Percentiles use linear interpolation between closest ranks
// (the same definition as numpy's default), so p50 of {1,2,3,4} is 2.5. This is the one
// definition of a median and of percentiles in streampipe: reports, benchmarks and
// measurements (link bandwidth, planner probes) all take theirs from here.

#include <nlohmann/json_fwd.hpp>

#include <cstddef>
#include <span>
#include <string>

namespace streampipe::report {

struct Summary {
  std::size_t count = 0;
  double min = 0, max = 0, mean = 0, stddev = 0;  // stddev: sample (n-1) standard deviation
  double median = 0, p90 = 0, p95 = 0, p99 = 0;
  double total = 0;
};

// Empty input gives an all-zero Summary with count 0.
[[nodiscard]] Summary summarize(std::span<const double> values);
// q in [0, 1]; the input need not be sorted. Empty input gives 0. Throws
// std::invalid_argument for q outside [0, 1].
[[nodiscard]] double percentile(std::span<const double> values, double q);
// percentile(values, 0.5): the same median as Summary::median.
[[nodiscard]] double median(std::span<const double> values);

void to_json(nlohmann::json& j, const Summary& s);

}  // namespace streampipe::report
