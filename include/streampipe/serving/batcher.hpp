// SPDX-License-Identifier: Apache-2.0
#pragma once
// A dynamic batcher: any number of host threads submit requests; each idle lane of the
// executor forms its own next batch by BatchPolicy (max batch, preferred sizes, max queue
// delay), highest priority first and FIFO within a priority, pads it up to its bucket and
// runs it. There is no dispatcher thread between the queue and the lanes: a request reaches
// the GPU with at most one thread wake-up (none when a lane is polling, see idle_spin). The
// queue is bounded: a submit beyond max_queue_size is rejected at once. A request that
// waits longer than its timeout is failed with timed_out and never runs (a dispatched
// request always completes); a timekeeper thread fails it on time even while every lane
// is busy.
//
// Errors stay local: a request with a wrong shape or priority is rejected alone; a batch
// whose launch() or finish() throws fails its own requests. shutdown(drain) runs every
// queued request, shutdown(cancel) fails the queued ones with cancelled; either way
// in-flight batches finish and no future is left hanging and every callback is called.
// The destructor drains.

#include "streampipe/serving/executor.hpp"
#include "streampipe/serving/policy.hpp"
#include "streampipe/serving/request.hpp"
#include "streampipe/report/latency_report.hpp"

#include <chrono>
#include <cstddef>
#include <future>
#include <memory>
#include <vector>

namespace streampipe::serving {

struct BatcherOptions {
  BatchPolicy policy;
  std::size_t max_queue_size = 1024;            // queued (not yet dispatched) requests
  std::chrono::microseconds default_timeout{0};  // 0: requests wait as long as needed
  int priority_levels = 1;
  bool record_queries = false;  // keep a report::QueryRecord per completed request
  // How long an idle lane polls the queue before it sleeps. A polling lane takes a new
  // request without a thread wake-up (tens of microseconds on a busy host, more in a VM),
  // at the price of one busy core per polling lane; 0 sleeps at once.
  std::chrono::microseconds idle_spin{0};
};

enum class ShutdownMode { drain, cancel };

struct BatcherStats {
  std::size_t submitted = 0, completed = 0, rejected = 0 /* bad request */, queue_full = 0, timed_out = 0,
              cancelled = 0, failed = 0, batches = 0, padded_rows = 0;
  std::vector<std::size_t> buckets;             // the plans
  std::vector<std::size_t> batches_per_bucket;  // parallel to buckets
};

class DynamicBatcher {
 public:
  // Validates the options, calls executor.prepare(buckets) (warm-up) and starts the
  // threads. The executor must outlive the batcher.
  DynamicBatcher(BatchExecutor& executor, BatcherOptions options);
  ~DynamicBatcher();
  DynamicBatcher(const DynamicBatcher&) = delete;
  DynamicBatcher& operator=(const DynamicBatcher&) = delete;

  // Thread-safe. Never blocks on the queue; rejections come back as a ready future.
  [[nodiscard]] std::future<RequestResult> submit(const Request& request);
  // The same, completed through `done` instead of a future (no thread wakes up for it). It
  // is called exactly once: on a lane for a request that ran or failed with its batch, on
  // the submitting thread for an immediate rejection, on the timekeeper or in shutdown()
  // for a timeout or cancellation. It must be short, must not throw (an exception is
  // reported and dropped) and must not call shutdown(). It may submit again: what the
  // completions of one batch submit enters the queue together after the batch's last
  // completion, so a closed loop of asynchronous clients keeps its batches whole.
  void submit(const Request& request, Completion done);
  // Idempotent; returns once every thread has stopped and every future is ready.
  void shutdown(ShutdownMode mode = ShutdownMode::drain);

  [[nodiscard]] BatcherStats stats() const;
  [[nodiscard]] const std::vector<std::size_t>& buckets() const noexcept;
  // Timestamps in records are milliseconds since this point (the batcher's construction).
  [[nodiscard]] Clock::time_point origin() const noexcept;
  // Moves the records collected so far out (record_queries must be on).
  [[nodiscard]] std::vector<report::QueryRecord> take_records();

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace streampipe::serving
