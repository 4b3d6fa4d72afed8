// SPDX-License-Identifier: Apache-2.0
#pragma once
// A soak run: many items through the engine, with faults injected at random into the
// operation (a C++ exception; on the GPU also a CUDA error), produce and consume stages,
// split over successive engines. Every item's future must resolve within a time limit,
// with the status its faults call for (done items are checked against a host reference),
// and its callback must run exactly once. Resident, pinned and device memory are sampled
// as the items go; threads are counted after a warm-up engine and after each engine is gone.
//
//   const SoakOutcome out = run_soak(options, [](const std::string& line) { fmt::print("{}\n", line); });

#include "soak/trend.hpp"

#include "streampipe/pipeline/engine.hpp"

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

namespace streampipe::bench::soak {

struct SoakOptions {
  pipeline::Backend backend = pipeline::Backend::host;
  int device = 0;
  std::size_t items = 1'000'000;
  double failure_rate = 0.05;     // chance that an item carries an injected fault
  std::uint64_t seed = 1;
  int engines = 4;                // successive engines the items are split over
  int lanes = 4, depth = 2, batch_items = 4;
  std::size_t max_item_bytes = std::size_t{16} << 10;  // inputs of 4 bytes up to this
  int samples = 50;               // memory samples over the run
  std::chrono::seconds item_timeout{60};  // an item not resolved by then is a hang
};

// What went wrong with items, by kind; all zero in a good run.
struct ItemFaults {
  std::size_t unresolved = 0;   // a future not ready within item_timeout (the run stops there)
  std::size_t wrong_output = 0; // done, but the output differs from the reference
  std::size_t wrong_status = 0; // failed without a fault of its own or its batch's, done with one, or cancelled
  std::size_t callbacks = 0;    // items whose callback ran other than once
  [[nodiscard]] std::size_t total() const noexcept { return unresolved + wrong_output + wrong_status + callbacks; }
};

struct SoakOutcome {
  std::size_t submitted = 0, done = 0, failed = 0, injected = 0;
  ItemFaults faults;
  std::size_t threads_before = 0;       // after the warm-up engine
  std::size_t threads_after_max = 0;    // the most seen after any engine was destroyed
  std::vector<Sample> rss, pinned, device;  // bytes; device empty on the host backend
  double warmup_items = 0;              // samples before this are not fitted
  double seconds = 0;
  std::string device_name = "none (host backend)";
};

// The run stopped because an item was not resolved in time: the engine may be hung, so it
// is left as it is (not destroyed) and the caller should end the process.
struct SoakHang : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Throws std::invalid_argument for options out of range, SoakHang as above, and what the
// engine's construction throws.
[[nodiscard]] SoakOutcome run_soak(const SoakOptions& options, const std::function<void(const std::string&)>& progress);

}  // namespace streampipe::bench::soak
