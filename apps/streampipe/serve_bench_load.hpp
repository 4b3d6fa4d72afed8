#pragma once
// serve-bench's closed-loop load: N client threads, each submitting one request, waiting
// for it, and submitting the next (perf_analyzer's concurrency mode). Time is cut into
// windows; the first ones warm up, the others are measured: throughput per window, and
// client-observed latency of every request submitted and completed inside them. Outputs
// are poisoned before each submit and a sample is checked against precomputed references.

#include "streampipe/batching/batcher.hpp"

#include <cstddef>
#include <string>
#include <vector>

namespace streampipe::cli::serve {

struct InputPool {
  std::vector<std::vector<float>> rows;      // request inputs, reused round-robin
  std::vector<std::vector<float>> expected;  // CPU reference output of each row
};

struct LoadOptions {
  int clients = 1;
  double window_ms = 200;
  int warmup_windows = 2;
  int windows = 5;
  std::size_t verify_every = 16;  // each client checks every n-th of its requests
};

struct LoadResult {
  std::vector<double> window_qps;   // completions per second in each measured window
  std::vector<double> latency_ms;   // client-observed, measured requests
  std::size_t completed = 0;        // all requests, warm-up included
  std::size_t errors = 0;
  std::string first_error;
  std::size_t verified = 0, mismatched = 0;
  double worst_error = 0;           // largest error / allowance among verified outputs
  batching::Clock::time_point measure_begin, measure_end;
};

[[nodiscard]] LoadResult run_closed_loop(batching::DynamicBatcher& batcher, const InputPool& pool,
                                         const LoadOptions& options);

}  // namespace streampipe::cli::serve
