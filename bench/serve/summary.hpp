// SPDX-License-Identifier: Apache-2.0
#pragma once
// What `bench serve` found, as the harness's tables and the JSON keys scripts read: the
// points' table (a row per mode and load: the windows' requests/s, latency percentiles, the
// batcher's mean batch, enqueue and compute times, verified outputs), the points' JSON
// (`points[]`: mode, clients, throughput_rps, latency_ms, server, verification), the issue's
// targets checked in the run, and on a GPU the MLP's compute rate by batch size.

#include "harness/result.hpp"
#include "serve/config.hpp"
#include "serve/points.hpp"
#if defined(STREAMPIPE_HAVE_CUBLAS)
#include "serve/mlp_rate.hpp"
#endif

#include <nlohmann/json.hpp>

#include <functional>
#include <string>
#include <vector>

namespace streampipe::bench::serve {

[[nodiscard]] Table points_table(const Config& c, const Setup& s, const std::vector<Point>& points);
[[nodiscard]] nlohmann::json points_json(const std::vector<Point>& points);

// The targets from this run (printed as met / NOT met): dynamic batching >= 10x the best
// requests/s of one at a time within 2x the single-request p99; per-bucket graphs cutting
// the median enqueue time >= 3x. Returns them as JSON (empty when the modes to compare
// did not run, and on the host, where nothing is printed either: the targets are a GPU's).
[[nodiscard]] nlohmann::json check_targets(const Config& c, bool gpu, const std::vector<Point>& points,
                                           const std::function<void(const std::string&)>& print);

#if defined(STREAMPIPE_HAVE_CUBLAS)
// The MLP's compute alone at max batch / 4, max batch, x4 and x16 (measure_mlp_rate), a row
// each; `at_max` receives the rate at max batch (rows 0 when it was not measured).
[[nodiscard]] Table mlp_rate_table(const Device& device, serving::MlpModel& model, const InputPool& pool,
                                   const Config& c, MlpRate& at_max);
#endif

}  // namespace streampipe::bench::serve
