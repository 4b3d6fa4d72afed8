// SPDX-License-Identifier: Apache-2.0
#pragma once
// serve-bench's closed-loop load (perf_analyzer's concurrency mode): N clients, each with
// one request outstanding, submitting the next when it completes. Two client models:
//   sync:  a thread per client that waits on its request's future (a thread wake-up per
//          request, as with perf_analyzer's default synchronous clients);
//   async: clients without threads that resubmit from the completion callback
//          (perf_analyzer --async), so what is measured is the batcher and the GPU.
// Time is cut into windows; the first ones warm up, the others are measured: throughput
// per window, and client-observed latency of every request submitted and completed inside
// them. A sample of requests is checked against precomputed references, their outputs
// poisoned before submit.

#include "streampipe/serving/batcher.hpp"
#include "streampipe/cuda/pinned_buffer.hpp"

#include <cstddef>
#include <span>
#include <string>
#include <vector>

namespace streampipe::bench::serve {

struct InputPool {
  std::vector<std::vector<float>> rows;      // request inputs, reused round-robin
  std::vector<std::vector<float>> expected;  // CPU reference output of each row
  // With pinned requests: the same rows in one page-locked block, which requests point at.
  PinnedBuffer<float> pinned_rows;

  void pin();  // copies `rows` into pinned_rows (needs a GPU)
  [[nodiscard]] bool pinned() const noexcept { return pinned_rows.size() > 0; }
  [[nodiscard]] std::span<const float> input(std::size_t r) const;
};

// Output rows for the requests in flight, in one block: page-locked when the pool is pinned
// (requests are then marked Request::pinned), else ordinary memory.
class OutputRows {
 public:
  OutputRows(std::size_t count, std::size_t size, bool pinned);
  [[nodiscard]] std::span<float> operator[](std::size_t i) const { return {data_ + i * size_, size_}; }

 private:
  std::vector<float> pageable_;
  PinnedBuffer<float> pinned_;
  float* data_ = nullptr;
  std::size_t size_ = 0;
};

// The request of input row `row` into `out`, pinned when the pool is.
[[nodiscard]] serving::Request make_request(const InputPool& pool, std::size_t row, std::span<float> out);

enum class ClientModel { sync, async };

struct LoadOptions {
  int clients = 1;
  ClientModel model = ClientModel::async;
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
  serving::Clock::time_point measure_begin, measure_end;
};

[[nodiscard]] LoadResult run_closed_loop(serving::DynamicBatcher& batcher, const InputPool& pool,
                                         const LoadOptions& options);

// Open loop (perf_analyzer's request-rate mode): requests are sent on a fixed schedule of
// `rate` per second whether or not earlier ones have finished. Each in-flight request needs
// an output buffer; with all `slots` in flight the client itself is overloaded and the
// request is counted as dropped. Rejections by the batcher (queue_full) are counted apart:
// under overload they are the batcher doing its job. Latency is the batcher's
// submit-to-completion time.
struct OpenLoopResult {
  LoadResult load;
  std::size_t sent = 0, dropped = 0, rejected = 0;
};

[[nodiscard]] OpenLoopResult run_open_loop(serving::DynamicBatcher& batcher, const InputPool& pool, double rate,
                                           std::size_t slots, const LoadOptions& options);

}  // namespace streampipe::bench::serve
