#include "streampipe/batching/batcher.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <exception>
#include <stdexcept>
#include <utility>

namespace streampipe::batching {

const char* to_string(RequestStatus status) noexcept {
  switch (status) {
    case RequestStatus::ok: return "ok";
    case RequestStatus::rejected: return "rejected";
    case RequestStatus::queue_full: return "queue_full";
    case RequestStatus::timed_out: return "timed_out";
    case RequestStatus::cancelled: return "cancelled";
    case RequestStatus::shut_down: return "shut_down";
    case RequestStatus::failed: return "failed";
  }
  return "unknown";
}

namespace {

RequestResult error_result(RequestStatus status, std::string message) {
  RequestResult r;
  r.status = status;
  r.error = std::move(message);
  return r;
}

std::future<RequestResult> ready_error(RequestStatus status, std::string message) {
  std::promise<RequestResult> p;
  p.set_value(error_result(status, std::move(message)));
  return p.get_future();
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

DynamicBatcher::DynamicBatcher(BatchExecutor& executor, BatcherOptions options)
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
  for (std::size_t i = 0; i < n; ++i) lanes_.push_back(std::make_unique<Lane>());
  try {
    for (std::size_t i = 0; i < n; ++i) lanes_[i]->thread = std::thread([this, i] { lane_loop(i); });
    scheduler_ = std::thread([this] { scheduler_loop(); });
  } catch (...) {
    shutdown(ShutdownMode::cancel);
    throw;
  }
}

DynamicBatcher::~DynamicBatcher() {
  try {
    shutdown(ShutdownMode::drain);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "streampipe: batcher shutdown failed: %s\n", e.what());
  }
}

std::future<RequestResult> DynamicBatcher::reject(const std::string& message) {
  {
    std::lock_guard lock(mu_);
    ++stats_.rejected;
  }
  return ready_error(RequestStatus::rejected, message);
}

std::future<RequestResult> DynamicBatcher::submit(const Request& request) {
  if (request.input.size() != executor_.input_size())
    return reject(fmt::format("request rejected: input has {} elements, the model takes {}",
                                   request.input.size(), executor_.input_size()));
  if (request.output.size() != executor_.output_size())
    return reject(fmt::format("request rejected: output has room for {} elements, the model writes {}",
                                   request.output.size(), executor_.output_size()));
  if (request.priority < 0 || request.priority >= options_.priority_levels)
    return reject(fmt::format("request rejected: priority {} is outside [0, {}]", request.priority,
                                   options_.priority_levels - 1));
  if (request.timeout.count() < 0)
    return reject("request rejected: negative timeout");

  Pending p{request, {}, Clock::now(), Clock::time_point::max()};
  const auto timeout = request.timeout.count() > 0 ? request.timeout : options_.default_timeout;
  if (timeout.count() > 0) p.deadline = p.submitted + timeout;
  auto future = p.promise.get_future();
  {
    std::lock_guard lock(mu_);
    if (stopping_) {
      return ready_error(RequestStatus::shut_down, "request rejected: the batcher is shutting down");
    }
    if (pending_ >= options_.max_queue_size) {
      ++stats_.queue_full;
      return ready_error(RequestStatus::queue_full,
                         fmt::format("request rejected: the queue is full ({} requests waiting)", pending_));
    }
    ++stats_.submitted;
    if (p.deadline != Clock::time_point::max()) ++with_deadline_;
    queues_[static_cast<std::size_t>(request.priority)].push_back(std::move(p));
    ++pending_;
  }
  scheduler_cv_.notify_one();
  return future;
}

void DynamicBatcher::take_expired(Clock::time_point now, std::vector<Pending>& out) {
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

Clock::time_point DynamicBatcher::earliest_deadline() const {
  auto t = Clock::time_point::max();
  if (with_deadline_ == 0) return t;
  for (const auto& q : queues_)
    for (const auto& p : q) t = std::min(t, p.deadline);
  return t;
}

Clock::time_point DynamicBatcher::oldest_submit() const {
  auto t = Clock::time_point::max();
  for (const auto& q : queues_)
    if (!q.empty()) t = std::min(t, q.front().submitted);
  return t;
}

void DynamicBatcher::scheduler_loop() {
  std::unique_lock lock(mu_);
  std::vector<Pending> failed;
  for (;;) {
    const auto now = Clock::now();
    take_expired(now, failed);
    if (stopping_ && mode_ == ShutdownMode::cancel) {
      for (auto& q : queues_) {
        for (auto& p : q) failed.push_back(std::move(p));
        stats_.cancelled += q.size();
        q.clear();
      }
      pending_ = 0;
      with_deadline_ = 0;
    }
    if (!failed.empty()) {
      std::vector<Pending> batch = std::move(failed);
      failed.clear();
      lock.unlock();
      for (auto& p : batch) {
        const bool expired = p.deadline <= now;
        p.promise.set_value(
            expired ? error_result(RequestStatus::timed_out,
                                   fmt::format("request timed out after {:.3f} ms in the queue",
                                               ms_since(p.submitted, now)))
                    : error_result(RequestStatus::cancelled, "request cancelled: the batcher shut down"));
      }
      lock.lock();
      continue;
    }
    if (stopping_ && pending_ == 0) return;

    Lane* idle = nullptr;
    std::size_t idle_index = 0;
    for (std::size_t i = 0; i < lanes_.size(); ++i)
      if (!lanes_[i]->busy) {
        idle = lanes_[i].get();
        idle_index = i;
        break;
      }
    auto wake = earliest_deadline();
    if (idle != nullptr && pending_ > 0) {
      BatchDecision d = decide_batch(pending_, now - oldest_submit(), options_.policy);
      if (stopping_) d.take = std::min(pending_, options_.policy.max_batch_size);  // drain now
      if (d.dispatch()) {
        Work work;
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
        const auto b = static_cast<std::size_t>(
            std::lower_bound(buckets_.begin(), buckets_.end(), work.bucket) - buckets_.begin());
        ++stats_.batches_per_bucket[b];
        ++stats_.batches;
        stats_.padded_rows += work.bucket - work.requests.size();
        idle->work = std::move(work);
        idle->busy = true;
        lanes_[idle_index]->cv.notify_one();
        continue;
      }
      if (d.wait != std::chrono::nanoseconds::max()) wake = std::min(wake, now + d.wait);
    }
    if (wake == Clock::time_point::max())
      scheduler_cv_.wait(lock);
    else
      scheduler_cv_.wait_until(lock, wake);
  }
}

void DynamicBatcher::lane_loop(std::size_t index) {
  Lane& lane = *lanes_[index];
  for (;;) {
    Work work;
    {
      std::unique_lock lock(mu_);
      lane.cv.wait(lock, [&] { return lane.work.has_value() || lanes_stop_; });
      if (!lane.work) return;
      work = std::move(*lane.work);
      lane.work.reset();
    }
    complete(index, work);
    {
      std::lock_guard lock(mu_);
      lane.busy = false;
    }
    scheduler_cv_.notify_one();
  }
}

void DynamicBatcher::complete(std::size_t lane, Work& work) {
  Batch batch;
  batch.bucket = work.bucket;
  batch.inputs.reserve(work.requests.size());
  batch.outputs.reserve(work.requests.size());
  for (const auto& p : work.requests) {
    batch.inputs.push_back(p.request.input);
    batch.outputs.push_back(p.request.output);
  }
  const auto begin = Clock::now();
  BatchTiming timing;
  bool error = false;
  std::string message;
  try {
    timing = executor_.run(lane, batch);
  } catch (const std::exception& e) {
    error = true;
    message = e.what();
  } catch (...) {
    error = true;
    message = "unknown exception";
  }
  const auto end = Clock::now();
  if (error) {
    {
      std::lock_guard lock(mu_);
      stats_.failed += work.requests.size();
    }
    const std::string text = fmt::format("request failed: its batch of {} (bucket {}, lane {}) failed: {}",
                                         work.requests.size(), work.bucket, lane, message);
    for (auto& p : work.requests) p.promise.set_value(error_result(RequestStatus::failed, text));
    return;
  }
  {
    std::lock_guard lock(mu_);
    stats_.completed += work.requests.size();
    if (options_.record_queries) {
      for (const auto& p : work.requests) {
        report::QueryRecord r;
        r.submit_ms = ms_since(origin_, p.submitted);
        r.enqueue_begin_ms = ms_since(origin_, begin);
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
  for (auto& p : work.requests)
    p.promise.set_value(RequestResult{RequestStatus::ok, {}, work.requests.size(), work.bucket, lane, p.submitted,
                                      work.dispatched, end});
}

void DynamicBatcher::shutdown(ShutdownMode mode) {
  std::call_once(shutdown_once_, [&] {
    {
      std::lock_guard lock(mu_);
      stopping_ = true;
      mode_ = mode;
    }
    scheduler_cv_.notify_all();
    if (scheduler_.joinable()) scheduler_.join();
    {
      std::lock_guard lock(mu_);
      lanes_stop_ = true;
      // Without a scheduler (a failed start), nothing drains the queue: cancel it.
      for (auto& q : queues_) {
        for (auto& p : q)
          p.promise.set_value(error_result(RequestStatus::cancelled, "request cancelled: the batcher shut down"));
        stats_.cancelled += q.size();
        q.clear();
      }
      pending_ = 0;
    }
    for (auto& lane : lanes_) lane->cv.notify_all();
    for (auto& lane : lanes_)
      if (lane->thread.joinable()) lane->thread.join();
  });
}

BatcherStats DynamicBatcher::stats() const {
  std::lock_guard lock(mu_);
  return stats_;
}

std::vector<report::QueryRecord> DynamicBatcher::take_records() {
  std::lock_guard lock(mu_);
  return std::exchange(records_, {});
}

}  // namespace streampipe::batching
