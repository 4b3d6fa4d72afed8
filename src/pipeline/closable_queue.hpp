// SPDX-License-Identifier: Apache-2.0
#pragma once
// A FIFO that consumer threads block on until a value arrives or the queue is closed. After
// close() the values already pushed are still handed out, in order; then pop() returns
// nothing. The engine's workers and its lanes' completion threads are loops over one.

#include <condition_variable>
#include <deque>
#include <mutex>
#include <optional>
#include <utility>

namespace streampipe::pipeline::detail {

template <typename T>
class ClosableQueue {
 public:
  // Appends `value` and wakes one consumer. Pushing after close() is allowed: the value is
  // still handed out if a consumer is left to take it.
  void push(T value) {
    push(std::move(value), [] {});
  }
  // The same, calling `before()` under the queue's lock first: whatever it does is ordered
  // as the values are (a lane enqueues a slot's work on its stream there, so the queue has
  // the stream's order). If `before` throws, nothing is pushed. The value is stored
  // first: when storing it fails (std::bad_alloc), `before` has not run, so a lane never
  // enqueues work that no completion thread would wait for.
  template <typename Before>
  void push(T value, Before&& before) {
    {
      std::lock_guard lock(mutex_);
      values_.push_back(std::move(value));
      try {
        std::forward<Before>(before)();
      } catch (...) {
        values_.pop_back();  // no consumer saw it: the lock was held throughout
        throw;
      }
    }
    cv_.notify_one();
  }

  // Blocks until there is a value (returns it) or the queue is closed and empty (nullopt).
  [[nodiscard]] std::optional<T> pop() {
    std::unique_lock lock(mutex_);
    cv_.wait(lock, [&] { return closed_ || !values_.empty(); });
    if (values_.empty()) return std::nullopt;
    std::optional<T> value(std::move(values_.front()));
    values_.pop_front();
    return value;
  }

  // Wakes every consumer; idempotent.
  void close() {
    {
      std::lock_guard lock(mutex_);
      closed_ = true;
    }
    cv_.notify_all();
  }

 private:
  std::mutex mutex_;
  std::condition_variable cv_;
  std::deque<T> values_;
  bool closed_ = false;
};

}  // namespace streampipe::pipeline::detail
