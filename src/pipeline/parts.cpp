// SPDX-License-Identifier: Apache-2.0
#include "streampipe/pipeline/parts.hpp"

#include "parts_scope.hpp"

#include <algorithm>
#include <atomic>
#include <deque>
#include <exception>
#include <mutex>
#include <utility>

namespace streampipe::pipeline {

struct PartQueue::State {
  struct Job {
    const std::function<void(std::size_t)>* part = nullptr;  // the caller's: valid until it returns
    std::size_t count = 0;
    std::size_t next = 0;  // guarded by State::mutex
    std::atomic<std::size_t> done{0};
    std::atomic<bool> failed{false};
    std::exception_ptr error;  // the first, guarded by State::mutex
  };
  std::mutex mutex;
  std::deque<std::shared_ptr<Job>> jobs;  // in call order; a job leaves once fully claimed

  // The next part of the oldest job with parts left; false when there is none.
  bool claim(std::shared_ptr<Job>& job, std::size_t& part) {
    std::lock_guard lock(mutex);
    while (!jobs.empty() && jobs.front()->next == jobs.front()->count) jobs.pop_front();
    if (jobs.empty()) return false;
    job = jobs.front();
    part = job->next++;
    return true;
  }

  // `job` is held by the caller's shared_ptr: the caller may return as soon as `done` reaches
  // the count, so nothing of the call (its `part`) is touched after that.
  void run(const std::shared_ptr<Job>& job, std::size_t part) noexcept {
    if (!job->failed.load(std::memory_order_acquire)) {
      try {
        (*job->part)(part);
      } catch (...) {
        std::lock_guard lock(mutex);
        if (!job->error) job->error = std::current_exception();
        job->failed.store(true, std::memory_order_release);
      }
    }
    job->done.fetch_add(1, std::memory_order_acq_rel);
    job->done.notify_all();
  }

  void help() noexcept {
    std::shared_ptr<Job> job;
    std::size_t part = 0;
    while (claim(job, part)) run(job, part);
  }
};

PartQueue::PartQueue(int helpers, Spawn spawn)
    : helpers_(std::max(helpers, 0)), spawn_(std::move(spawn)), state_(std::make_shared<State>()) {}

PartQueue::~PartQueue() = default;

void PartQueue::run(std::size_t count, const std::function<void(std::size_t)>& part) {
  if (count <= 1 || helpers_ == 0) {
    for (std::size_t i = 0; i < count; ++i) part(i);
    return;
  }
  auto job = std::make_shared<State::Job>();
  job->part = &part;
  job->count = count;
  {
    std::lock_guard lock(state_->mutex);
    state_->jobs.push_back(job);
  }
  const auto n_helpers = std::min<std::size_t>(static_cast<std::size_t>(helpers_), count - 1);
  for (std::size_t h = 0; h < n_helpers; ++h) spawn_([state = state_] { state->help(); });
  // Older calls' parts first: this call's own are claimed in turn.
  for (;;) {
    {
      std::lock_guard lock(state_->mutex);
      if (job->next == count) break;
    }
    std::shared_ptr<State::Job> j;
    std::size_t p = 0;
    if (!state_->claim(j, p)) break;
    state_->run(j, p);
  }
  // Only parts other threads have started remain.
  for (std::size_t d = job->done.load(std::memory_order_acquire); d < count;
       d = job->done.load(std::memory_order_acquire))
    job->done.wait(d, std::memory_order_acquire);
  // Moved out: the job may be destroyed by a helper's last reference while it propagates.
  if (std::exception_ptr error = std::move(job->error)) std::rethrow_exception(error);
}

namespace {
thread_local PartQueue* current_parts = nullptr;
}  // namespace

namespace detail {
PartsScope::PartsScope(PartQueue& parts) noexcept : previous_(std::exchange(current_parts, &parts)) {}
PartsScope::~PartsScope() { current_parts = previous_; }
}  // namespace detail

void run_parts(std::size_t count, const std::function<void(std::size_t)>& part) {
  if (current_parts != nullptr) {
    current_parts->run(count, part);
    return;
  }
  for (std::size_t i = 0; i < count; ++i) part(i);
}

}  // namespace streampipe::pipeline
