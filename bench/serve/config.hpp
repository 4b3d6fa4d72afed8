// SPDX-License-Identifier: Apache-2.0
#pragma once
// `bench serve`'s settings, read from its declared parameters and checked before anything is
// built: the model's layers, the load (closed-loop client counts or open-loop rates), the
// modes, the batch policy and the executor's options. A value it cannot use throws
// ParameterError (bad usage) naming the option.

#include "harness/benchmark.hpp"
#include "serve/load.hpp"

#include "streampipe/report/latency_report.hpp"
#include "streampipe/serving/batcher.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace streampipe::bench::serve {

struct ModeSpec {
  std::string key, label, short_label;
  bool batching = false, graphs = false;
};

struct Config {
  std::string layers;               // as given: "4096,4096,..."
  std::vector<std::size_t> sizes;   // the input size, then each layer's output size
  std::vector<int> concurrency;     // closed loop: client counts
  std::vector<double> rates;        // open loop instead, when not empty: offered requests/s
  std::vector<ModeSpec> modes;
  serving::BatchPolicy policy;
  int max_batch = 256;
  std::vector<int> preferred;
  int max_delay_us = 0;
  int lanes = 2;
  int queue = 4096;
  std::string sync, client, io, request_memory, backend;
  int idle_spin_us = 500;
  double window_ms = 200;
  int pool_rows = 16;
  std::uint64_t seed = 42;
  bool report = false;  // print every point's full latency report
  int runs = 5, warmup = 2, device = 0;

  [[nodiscard]] bool open_loop() const noexcept { return !rates.empty(); }
  [[nodiscard]] ClientModel client_model() const noexcept {
    return client == "async" ? ClientModel::async : ClientModel::sync;
  }
  [[nodiscard]] report::SyncMode sync_mode() const noexcept {
    return sync == "blocking" ? report::SyncMode::blocking : report::SyncMode::spin;
  }
};

// The declared parameters of `bench serve` (the options of `serve-bench`), defaults included.
[[nodiscard]] std::vector<Parameter> parameters();
// The settings of a run; throws ParameterError for a value it cannot use.
[[nodiscard]] Config read_config(const State& state);
// Every mode serve-bench knows, in the order it runs them.
[[nodiscard]] const std::vector<ModeSpec>& all_modes();

}  // namespace streampipe::bench::serve
