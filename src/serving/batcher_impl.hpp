// SPDX-License-Identifier: Apache-2.0
#pragma once
// DynamicBatcher's insides (the public class is a handle to this): the priority queues under
// one mutex, the lanes' threads that each form and run their own batches, the timekeeper
// that fails requests past their deadline, and the deferral of what a batch's completions
// submit. include/streampipe/serving/batcher.hpp states the contract.

#include "streampipe/serving/batcher.hpp"

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

namespace streampipe::serving {

class DynamicBatcher::Impl {
  // x86-64's and most Arm cores' line (std::hardware_destructive_interference_size varies
  // with compiler flags, so GCC warns against it in a layout).
  static constexpr std::size_t kCacheLine = 64;

 public:
  // Validates the options, calls executor.prepare(buckets) and starts a thread per lane and
  // the timekeeper (on a failure to start them: shuts down, cancelling, and rethrows).
  Impl(BatchExecutor& executor, BatcherOptions options);
  Impl(const Impl&) = delete;
  Impl& operator=(const Impl&) = delete;

  std::future<RequestResult> submit(const Request& request);
  void submit(const Request& request, Completion done);
  void shutdown(ShutdownMode mode);
  [[nodiscard]] BatcherStats stats() const;
  [[nodiscard]] const std::vector<std::size_t>& buckets() const noexcept { return buckets_; }
  [[nodiscard]] Clock::time_point origin() const noexcept { return origin_; }
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
    const Impl* owner = nullptr;
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

  // The lock and what it guards start a cache line of their own, and the polled counter
  // another: a lane polling the counter, or reading the options, must not pull the line
  // that a submitting client holds the lock on (where the heap put the object decided it).
  alignas(kCacheLine) mutable std::mutex mu_;
  std::condition_variable lanes_cv_;       // idle lanes that stopped polling sleep here
  std::condition_variable timekeeper_cv_;
  std::size_t sleeping_lanes_ = 0;
  // Written under mu_, read by polling lanes without it: a change means "look again".
  alignas(kCacheLine) std::atomic<std::uint64_t> submissions_{0};
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
