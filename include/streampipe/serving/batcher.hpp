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

#include <atomic>
#include <chrono>
#include <cstdint>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <future>
#include <mutex>
#include <optional>
#include <thread>
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
  [[nodiscard]] const std::vector<std::size_t>& buckets() const noexcept { return buckets_; }
  // Timestamps in records are milliseconds since this point (the batcher's construction).
  [[nodiscard]] Clock::time_point origin() const noexcept { return origin_; }
  // Moves the records collected so far out (record_queries must be on).
  [[nodiscard]] std::vector<report::QueryRecord> take_records();

 private:
  struct Pending {
    Request request;
    std::optional<std::promise<RequestResult>> promise;  // either a promise
    Completion done;                                     // or a callback
    Clock::time_point submitted;
    Clock::time_point deadline;  // Clock::time_point::max() without a timeout
  };
  // Submits made on a lane thread by the completions of one of its batches.
  struct Deferred {
    const DynamicBatcher* owner = nullptr;
    std::vector<Pending> requests;
  };
  struct Work {
    std::vector<Pending> requests;
    std::size_t bucket = 0;
    Clock::time_point dispatched;
    Batch batch;  // the requests' spans, as the executor sees them
    std::size_t slot = 0;
    Clock::time_point launched;
  };

  // Checks `p.request`, stamps it and queues it (or defers it, on a lane completing a
  // batch); returns the result to complete it with when it is refused at once.
  std::optional<RequestResult> admit(Pending& p);
  // Queues deferred submits under one lock; completes the refused ones.
  void admit_deferred(std::vector<Pending>& requests);
  // Under mu_: queues `p`, or returns why not (shutting down, queue full).
  std::optional<RequestResult> queue(Pending& p);
  // Completes `requests` with result(p), deferring what their callbacks submit.
  template <typename MakeResult>
  void complete_batch(std::vector<Pending>& requests, MakeResult&& result);
  static void complete(Pending& p, RequestResult&& result) noexcept;
  void timekeeper_loop();
  void lane_loop(std::size_t lane);
  // Under `lock` (on mu_): blocks until this lane has a batch (true) or nothing is left to
  // run (false). Requests found past their deadline are moved to `expired` on the way;
  // it also returns (true, `work` empty) so the caller fails them outside the lock.
  // With `block` false it never waits: no batch to form now returns true, `work` empty.
  bool next_batch(std::unique_lock<std::mutex>& lock, Work& work, std::vector<Pending>& expired, bool block);
  // launch() returns false when the executor refused the batch (its requests then failed).
  bool launch(std::size_t lane, Work& work);
  void finish(std::size_t lane, Work& work);
  void fail_batch(std::size_t lane, Work& work, const std::string& why);
  // Under mu_: removes queued requests past their deadline into `out`.
  void take_expired(Clock::time_point now, std::vector<Pending>& out);
  // Under mu_: moves every queued request into `out` (cancellation).
  void take_all(std::vector<Pending>& out);
  // Without mu_: completes each with timed_out (past its deadline at `now`) or cancelled.
  static void fail_all(std::vector<Pending>& requests, Clock::time_point now);
  [[nodiscard]] Clock::time_point earliest_deadline() const;  // under mu_
  [[nodiscard]] Clock::time_point oldest_submit() const;      // under mu_, pending_ > 0

  BatchExecutor& executor_;
  const BatcherOptions options_;
  const std::vector<std::size_t> buckets_;
  const Clock::time_point origin_;

  mutable std::mutex mu_;
  std::condition_variable lanes_cv_;       // idle lanes that stopped polling sleep here
  std::condition_variable timekeeper_cv_;
  std::size_t sleeping_lanes_ = 0;
  // Written under mu_, read by polling lanes without it: a change means "look again".
  std::atomic<std::uint64_t> submissions_{0};
  std::atomic<bool> stopping_hint_{false};
  std::vector<std::deque<Pending>> queues_;  // one per priority level
  std::size_t pending_ = 0;
  std::size_t with_deadline_ = 0;
  bool stopping_ = false;
  BatcherStats stats_;
  std::vector<report::QueryRecord> records_;
  std::vector<std::thread> lanes_;
  std::thread timekeeper_;
  std::once_flag shutdown_once_;
  static thread_local Deferred* deferred_;  // set while a lane completes a batch
};

}  // namespace streampipe::serving
