// SPDX-License-Identifier: Apache-2.0
#pragma once
// serve-bench's plot: throughput (requests/s, linear) against p99 latency (ms, log scale),
// one polyline per mode, one marker per concurrency level. Plain SVG, no dependencies.

#include <string>
#include <vector>

namespace streampipe::bench::serve {

struct PlotPoint {
  double p99_ms = 0;
  double throughput = 0;
  int clients = 0;
};

struct PlotSeries {
  std::string name;
  std::vector<PlotPoint> points;
};

[[nodiscard]] std::string throughput_latency_svg(const std::string& title, const std::vector<PlotSeries>& series);

}  // namespace streampipe::bench::serve
