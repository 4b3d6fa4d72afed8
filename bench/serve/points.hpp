// SPDX-License-Identifier: Apache-2.0
#pragma once
// The points of `bench serve`: each mode (a batcher over a fresh executor) at each load (a
// closed-loop client count or an open-loop rate), measured in windows by load.hpp; per point
// the clients' throughput and latency, the batcher's latency report over the measured
// windows, and how many sampled outputs matched the CPU reference.

#include "serve/config.hpp"
#include "serve/load.hpp"

#include "streampipe/report/latency_report.hpp"
#include "streampipe/report/statistics.hpp"
#include "streampipe/serving/mlp_reference.hpp"
#if defined(STREAMPIPE_HAVE_CUBLAS)
#include "streampipe/serving/mlp_model.hpp"
#endif

#include <nlohmann/json.hpp>

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace streampipe::bench::serve {

// What every point is served with, built once before anything is timed.
struct Setup {
  bool gpu = false;
  serving::MlpWeights weights;
  InputPool pool;                // inputs and their CPU references
  bool pinned_requests = false;  // page-locked requests (needs a GPU)
  std::string model_name;
  std::string device_name = "host";
#if defined(STREAMPIPE_HAVE_CUBLAS)
  std::unique_ptr<Device> device;
  std::unique_ptr<serving::MlpModel> model;
#endif
};

struct Point {
  std::string mode;
  int clients = 0;                        // closed loop
  double rate = 0;                        // open loop: offered requests/s
  std::size_t dropped = 0, rejected = 0;  // open loop
  report::Summary qps, latency;
  report::LatencySummary server;
  LoadResult load;
  // Every request served and every sampled output matched.
  [[nodiscard]] bool verified() const noexcept {
    return load.errors == 0 && load.mismatched == 0 && load.verified > 0;
  }
};

// Serves every mode of `c` at every load, printing a line per point (and its full latency
// report with c.report). With `report_runs`, appends each point's report JSON (every query)
// to that array.
[[nodiscard]] std::vector<Point> serve_points(const Config& c, const Setup& setup, nlohmann::json* report_runs,
                                              const std::function<void(const std::string&)>& print);

}  // namespace streampipe::bench::serve
