// SPDX-License-Identifier: Apache-2.0
#include "streampipe/report/statistics.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>
#include <vector>

namespace streampipe::report {
namespace {

double sorted_percentile(const std::vector<double>& sorted, double q) {
  if (sorted.empty()) return 0.0;
  const double rank = q * static_cast<double>(sorted.size() - 1);
  const auto lo = static_cast<std::size_t>(std::floor(rank));
  const auto hi = std::min(lo + 1, sorted.size() - 1);
  const double frac = rank - static_cast<double>(lo);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * frac;
}

}  // namespace

double percentile(std::span<const double> values, double q) {
  if (q < 0.0 || q > 1.0) throw std::invalid_argument("percentile: q must be in [0, 1]");
  std::vector<double> sorted(values.begin(), values.end());
  std::sort(sorted.begin(), sorted.end());
  return sorted_percentile(sorted, q);
}

double median(std::span<const double> values) { return percentile(values, 0.5); }

Summary summarize(std::span<const double> values) {
  Summary s;
  if (values.empty()) return s;
  std::vector<double> sorted(values.begin(), values.end());
  std::sort(sorted.begin(), sorted.end());
  s.count = sorted.size();
  s.min = sorted.front();
  s.max = sorted.back();
  s.total = std::accumulate(sorted.begin(), sorted.end(), 0.0);
  s.mean = s.total / static_cast<double>(s.count);
  if (s.count > 1) {
    double sq = 0.0;
    for (double v : sorted) sq += (v - s.mean) * (v - s.mean);
    s.stddev = std::sqrt(sq / static_cast<double>(s.count - 1));
  }
  s.median = sorted_percentile(sorted, 0.5);
  s.p90 = sorted_percentile(sorted, 0.90);
  s.p95 = sorted_percentile(sorted, 0.95);
  s.p99 = sorted_percentile(sorted, 0.99);
  return s;
}

void to_json(nlohmann::json& j, const Summary& s) {
  j = nlohmann::json{{"count", s.count}, {"min", s.min},       {"max", s.max},   {"mean", s.mean},
                     {"stddev", s.stddev}, {"median", s.median}, {"p90", s.p90}, {"p95", s.p95},
                     {"p99", s.p99},       {"total", s.total}};
}

}  // namespace streampipe::report
