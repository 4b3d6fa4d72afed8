// SPDX-License-Identifier: Apache-2.0
#include "batcher_impl.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <exception>
#include <optional>
#include <stdexcept>
#include <utility>

namespace streampipe::serving {

namespace {

RequestResult error_result(RequestStatus status, std::string message) {
  RequestResult r;
  r.status = status;
  r.error = std::move(message);
  return r;
}

double ms_since(Clock::time_point origin, Clock::time_point t) {
  return std::chrono::duration<double, std::milli>(t - origin).count();
}

BatcherOptions checked(BatcherOptions o, const BatchExecutor& executor) {
  validate(o.policy);
  if (o.max_queue_size == 0) throw std::invalid_argument("batcher: max queue size must be at least 1");
  if (o.priority_levels < 1) throw std::invalid_argument("batcher: priority levels must be at least 1");
  if (o.default_timeout.count() < 0) throw std::invalid_argument("batcher: default timeout must not be negative");
  if (executor.lanes() == 0) throw std::invalid_argument("batcher: the executor has no lanes");
  return o;
}

}  // namespace

DynamicBatcher::Impl::Impl(BatchExecutor& executor, BatcherOptions options)
    : executor_(executor),
      options_(checked(std::move(options), executor)),
      buckets_(bucket_sizes(options_.policy)),
      origin_(Clock::now()),
      queues_(static_cast<std::size_t>(options_.priority_levels)) {
  stats_.buckets = buckets_;
  stats_.batches_per_bucket.assign(buckets_.size(), 0);
  executor_.prepare(buckets_);
  const std::size_t n = executor_.lanes();
  lanes_.reserve(n);
  try {
    for (std::size_t i = 0; i < n; ++i) lanes_.emplace_back([this, i] { lane_loop(i); });
    timekeeper_ = std::thread([this] { timekeeper_loop(); });
  } catch (...) {
    shutdown(ShutdownMode::cancel);
    throw;
  }
}

thread_local DynamicBatcher::Impl::Deferred* DynamicBatcher::Impl::deferred_ = nullptr;

void DynamicBatcher::Impl::complete(Pending& p, RequestResult&& result) noexcept {
  if (p.done) {
    try {
      p.done(std::move(result));
    } catch (const std::exception& e) {
      std::fprintf(stderr, "streampipe: a request's completion callback threw (dropped): %s\n", e.what());
    } catch (...) {
      std::fprintf(stderr, "streampipe: a request's completion callback threw (dropped)\n");
    }
    return;
  }
  p.promise->set_value(std::move(result));
}

template <typename MakeResult>
void DynamicBatcher::Impl::complete_batch(std::vector<Pending>& requests, MakeResult&& result) {
  Deferred deferred{this, {}};
  {
    // Restored however the loop ends: deferred_ must never outlive `deferred`.
    struct Restore {
      Deferred* outer;
      ~Restore() { deferred_ = outer; }
    } restore{std::exchange(deferred_, &deferred)};
    for (auto& p : requests) complete(p, result(p));
  }
  if (!deferred.requests.empty()) admit_deferred(deferred.requests);
}

std::optional<RequestResult> DynamicBatcher::Impl::admit(Pending& p) {
  const Request& request = p.request;
  std::string refused;
  if (request.input.size() != executor_.input_size())
    refused = fmt::format("request rejected: input has {} elements, the model takes {}", request.input.size(),
                          executor_.input_size());
  else if (request.output.size() != executor_.output_size())
    refused = fmt::format("request rejected: output has room for {} elements, the model writes {}",
                          request.output.size(), executor_.output_size());
  else if (request.priority < 0 || request.priority >= options_.priority_levels)
    refused = fmt::format("request rejected: priority {} is outside [0, {}]", request.priority,
                          options_.priority_levels - 1);
  else if (request.timeout.count() < 0)
    refused = "request rejected: negative timeout";
  else if (auto why = executor_.refusal(request))
    refused = "request rejected: " + *why;
  if (!refused.empty()) {
    std::lock_guard lock(mu_);
    ++stats_.rejected;
    return error_result(RequestStatus::rejected, std::move(refused));
  }

  p.submitted = Clock::now();
  p.deadline = Clock::time_point::max();
  const auto timeout = request.timeout.count() > 0 ? request.timeout : options_.default_timeout;
  if (timeout.count() > 0) p.deadline = p.submitted + timeout;
  if (deferred_ != nullptr && deferred_->owner == this) {
    deferred_->requests.push_back(std::move(p));
    return std::nullopt;
  }
  const bool has_deadline = p.deadline != Clock::time_point::max();
  bool wake_lane = false;
  {
    std::lock_guard lock(mu_);
    if (auto refusal = queue(p)) return refusal;
    submissions_.fetch_add(1, std::memory_order_release);
    wake_lane = sleeping_lanes_ > 0;
  }
  // Polling lanes see submissions_ change; only a sleeping one costs a wake-up.
  if (wake_lane) lanes_cv_.notify_one();
  if (has_deadline) timekeeper_cv_.notify_one();
  return std::nullopt;
}

std::optional<RequestResult> DynamicBatcher::Impl::queue(Pending& p) {
  if (stopping_) return error_result(RequestStatus::shut_down, "request rejected: the batcher is shutting down");
  if (pending_ >= options_.max_queue_size) {
    ++stats_.queue_full;
    return error_result(RequestStatus::queue_full,
                        fmt::format("request rejected: the queue is full ({} requests waiting)", pending_));
  }
  ++stats_.submitted;
  if (p.deadline != Clock::time_point::max()) ++with_deadline_;
  queues_[static_cast<std::size_t>(p.request.priority)].push_back(std::move(p));
  ++pending_;
  return std::nullopt;
}

void DynamicBatcher::Impl::admit_deferred(std::vector<Pending>& requests) {
  std::vector<std::pair<Pending, RequestResult>> refused;
  bool has_deadline = false, wake_lanes = false;
  {
    std::lock_guard lock(mu_);
    for (auto& p : requests) {
      const bool deadline = p.deadline != Clock::time_point::max();
      if (auto refusal = queue(p))
        refused.emplace_back(std::move(p), std::move(*refusal));
      else
        has_deadline = has_deadline || deadline;
    }
    if (refused.size() < requests.size()) {
      submissions_.fetch_add(1, std::memory_order_release);
      wake_lanes = sleeping_lanes_ > 0;
    }
  }
  if (wake_lanes) lanes_cv_.notify_all();
  if (has_deadline) timekeeper_cv_.notify_one();
  // Not deferred again: a callback resubmitting on refusal goes straight to the queue.
  for (auto& [p, result] : refused) complete(p, std::move(result));
}

std::future<RequestResult> DynamicBatcher::Impl::submit(const Request& request) {
  Pending p{request, std::promise<RequestResult>{}, {}, {}, {}};
  auto future = p.promise->get_future();
  if (auto refusal = admit(p)) p.promise->set_value(std::move(*refusal));
  return future;
}

void DynamicBatcher::Impl::submit(const Request& request, Completion done) {
  if (!done) throw std::invalid_argument("batcher: submit with an empty completion callback");
  Pending p{request, std::nullopt, std::move(done), {}, {}};
  if (auto refusal = admit(p)) complete(p, std::move(*refusal));
}

void DynamicBatcher::Impl::take_expired(Clock::time_point now, std::vector<Pending>& out) {
  if (with_deadline_ == 0) return;
  for (auto& q : queues_) {
    for (auto it = q.begin(); it != q.end();) {
      if (it->deadline <= now) {
        out.push_back(std::move(*it));
        it = q.erase(it);
        --pending_;
        --with_deadline_;
        ++stats_.timed_out;
      } else {
        ++it;
      }
    }
  }
}

Clock::time_point DynamicBatcher::Impl::earliest_deadline() const {
  auto t = Clock::time_point::max();
  if (with_deadline_ == 0) return t;
  for (const auto& q : queues_)
    for (const auto& p : q) t = std::min(t, p.deadline);
  return t;
}

Clock::time_point DynamicBatcher::Impl::oldest_submit() const {
  auto t = Clock::time_point::max();
  for (const auto& q : queues_)
    if (!q.empty()) t = std::min(t, q.front().submitted);
  return t;
}

void DynamicBatcher::Impl::take_all(std::vector<Pending>& out) {
  for (auto& q : queues_) {
    stats_.cancelled += q.size();
    for (auto& p : q) out.push_back(std::move(p));
    q.clear();
  }
  pending_ = 0;
  with_deadline_ = 0;
}

void DynamicBatcher::Impl::fail_all(std::vector<Pending>& requests, Clock::time_point now) {
  for (auto& p : requests) {
    const bool expired = p.deadline <= now;
    complete(p, expired ? error_result(RequestStatus::timed_out,
                                       fmt::format("request timed out after {:.3f} ms in the queue",
                                                   ms_since(p.submitted, now)))
                        : error_result(RequestStatus::cancelled, "request cancelled: the batcher shut down"));
  }
  requests.clear();
}

// Lanes fail expired requests when they look at the queue; this thread does it while they
// are all busy, sleeping until the earliest deadline (forever when no request has one).
void DynamicBatcher::Impl::timekeeper_loop() {
  std::unique_lock lock(mu_);
  std::vector<Pending> expired;
  while (!stopping_) {
    const auto now = Clock::now();
    take_expired(now, expired);
    if (!expired.empty()) {
      lock.unlock();
      fail_all(expired, now);
      lock.lock();
      continue;
    }
    const auto wake = earliest_deadline();
    if (wake == Clock::time_point::max())
      timekeeper_cv_.wait(lock);
    else
      timekeeper_cv_.wait_until(lock, wake);
  }
}

bool DynamicBatcher::Impl::next_batch(std::unique_lock<std::mutex>& lock, Work& work, std::vector<Pending>& expired,
                                bool block) {
  const auto spin_end = Clock::now() + options_.idle_spin;
  for (;;) {
    const auto now = Clock::now();
    take_expired(now, expired);
    if (!expired.empty()) return true;
    // Draining: everything queued goes now. Cancelling: shutdown() emptied the queue.
    if (stopping_ && pending_ == 0) return false;
    auto until = Clock::time_point::max();
    if (pending_ > 0) {
      BatchDecision d = decide_batch(pending_, now - oldest_submit(), options_.policy);
      if (stopping_) d.take = std::min(pending_, options_.policy.max_batch_size);
      if (d.dispatch()) {
        work.requests.reserve(d.take);
        for (auto& q : queues_) {
          while (!q.empty() && work.requests.size() < d.take) {
            if (q.front().deadline != Clock::time_point::max()) --with_deadline_;
            work.requests.push_back(std::move(q.front()));
            q.pop_front();
          }
        }
        pending_ -= work.requests.size();
        work.bucket = bucket_for(work.requests.size(), buckets_);
        work.dispatched = now;
        const auto b = static_cast<std::size_t>(std::lower_bound(buckets_.begin(), buckets_.end(), work.bucket) -
                                                buckets_.begin());
        ++stats_.batches_per_bucket[b];
        ++stats_.batches;
        stats_.padded_rows += work.bucket - work.requests.size();
        return true;
      }
      until = now + d.wait;
    }
    if (!block) return true;
    if (now < spin_end) {
      // Poll without the lock until something is submitted, shutdown begins, the queue
      // delay runs out or the polling time ends; then look again under the lock.
      const auto seen = submissions_.load(std::memory_order_acquire);
      const auto stop = std::min(until, spin_end);
      lock.unlock();
      while (submissions_.load(std::memory_order_acquire) == seen && !stopping_hint_.load(std::memory_order_acquire) &&
             Clock::now() < stop) {
      }
      lock.lock();
      continue;
    }
    ++sleeping_lanes_;
    if (until == Clock::time_point::max())
      lanes_cv_.wait(lock);
    else
      lanes_cv_.wait_until(lock, until);
    --sleeping_lanes_;
  }
}

// A lane keeps up to two batches: while one runs on the device the lane waits for it,
// then launches the next one at once (everything that queued up meanwhile) and only then
// completes the finished one, so the device does not wait for the host's bookkeeping
// (writing outputs, waking each request's client).
void DynamicBatcher::Impl::lane_loop(std::size_t index) {
  std::vector<Pending> expired;
  std::optional<Work> in_flight;
  std::size_t free_slot = 0;
  for (;;) {
    if (in_flight) executor_.wait(index, in_flight->slot);
    Work work;
    bool more = true;
    {
      std::unique_lock lock(mu_);
      // With a batch in flight only a batch that may go now: waiting here for company
      // would hold back the finished batch's requests.
      more = next_batch(lock, work, expired, !in_flight);
    }
    if (!expired.empty()) fail_all(expired, Clock::now());
    std::optional<Work> launched;
    if (!work.requests.empty()) {
      work.slot = free_slot;
      if (launch(index, work)) {
        launched = std::move(work);
        free_slot = (free_slot + 1) % kSlotsPerLane;
      }
    }
    if (in_flight) finish(index, *in_flight);
    in_flight = std::move(launched);
    if (!more && !in_flight) return;
  }
}

bool DynamicBatcher::Impl::launch(std::size_t lane, Work& work) {
  work.batch.bucket = work.bucket;
  work.batch.inputs.reserve(work.requests.size());
  work.batch.outputs.reserve(work.requests.size());
  work.batch.pinned.reserve(work.requests.size());
  for (const auto& p : work.requests) {
    work.batch.inputs.push_back(p.request.input);
    work.batch.outputs.push_back(p.request.output);
    work.batch.pinned.push_back(p.request.pinned);
  }
  work.launched = Clock::now();
  try {
    executor_.launch(lane, work.slot, work.batch);
    return true;
  } catch (const std::exception& e) {
    fail_batch(lane, work, e.what());
  } catch (...) {
    fail_batch(lane, work, "unknown exception");
  }
  return false;
}

void DynamicBatcher::Impl::fail_batch(std::size_t lane, Work& work, const std::string& why) {
  {
    std::lock_guard lock(mu_);
    stats_.failed += work.requests.size();
  }
  const std::string text = fmt::format("request failed: its batch of {} (bucket {}, lane {}) failed: {}",
                                       work.requests.size(), work.bucket, lane, why);
  complete_batch(work.requests, [&](const Pending&) { return error_result(RequestStatus::failed, text); });
}

void DynamicBatcher::Impl::finish(std::size_t lane, Work& work) {
  BatchTiming timing;
  try {
    timing = executor_.finish(lane, work.slot, work.batch);
  } catch (const std::exception& e) {
    fail_batch(lane, work, e.what());
    return;
  } catch (...) {
    fail_batch(lane, work, "unknown exception");
    return;
  }
  const auto end = Clock::now();
  {
    std::lock_guard lock(mu_);
    stats_.completed += work.requests.size();
    if (options_.record_queries) {
      for (const auto& p : work.requests) {
        report::QueryRecord r;
        r.submit_ms = ms_since(origin_, p.submitted);
        r.enqueue_begin_ms = ms_since(origin_, work.launched);
        r.enqueue_end_ms = r.enqueue_begin_ms + timing.enqueue_ms;
        r.complete_ms = ms_since(origin_, end);
        r.h2d_ms = timing.h2d_ms;
        r.compute_ms = timing.compute_ms;
        r.d2h_ms = timing.d2h_ms;
        r.batch = work.requests.size();
        records_.push_back(r);
      }
    }
  }
  complete_batch(work.requests, [&](const Pending& p) {
    return RequestResult{RequestStatus::ok, {}, work.requests.size(), work.bucket, lane, p.submitted, work.dispatched,
                         end};
  });
}

void DynamicBatcher::Impl::shutdown(ShutdownMode mode) {
  std::call_once(shutdown_once_, [&] {
    std::vector<Pending> cancelled;
    {
      std::lock_guard lock(mu_);
      stopping_ = true;
      if (mode == ShutdownMode::cancel) take_all(cancelled);
      stopping_hint_.store(true, std::memory_order_release);
    }
    fail_all(cancelled, Clock::now());
    lanes_cv_.notify_all();
    timekeeper_cv_.notify_all();
    if (timekeeper_.joinable()) timekeeper_.join();
    // Lanes finish their batch in flight and, when draining, run what is queued.
    for (auto& lane : lanes_)
      if (lane.joinable()) lane.join();
    // Without lanes (a failed start) nothing ran the queue: cancel what is left.
    {
      std::lock_guard lock(mu_);
      take_all(cancelled);
    }
    fail_all(cancelled, Clock::now());
  });
}

BatcherStats DynamicBatcher::Impl::stats() const {
  std::lock_guard lock(mu_);
  return stats_;
}

std::vector<report::QueryRecord> DynamicBatcher::Impl::take_records() {
  std::lock_guard lock(mu_);
  return std::exchange(records_, {});
}

}  // namespace streampipe::serving
