// SPDX-License-Identifier: Apache-2.0
#include "lane_queue.hpp"

#include <utility>

namespace streampipe::pipeline::detail {

LaneQueue::LaneQueue(std::unique_ptr<LaneExecutor> executor, Complete complete)
    : executor_(std::move(executor)), complete_(std::move(complete)), completion_([this] { loop(); }) {}

LaneQueue::~LaneQueue() { stop(); }

bool LaneQueue::push(Slot& slot) {
  bool fenced = false;
  {
    std::lock_guard lock(mutex_);
    executor_->enqueue(slot.work);
    fenced = slot.work.inputs_fenced;
    fifo_.push_back(&slot);
  }
  cv_.notify_one();
  return fenced;
}

void LaneQueue::stop() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (completion_.joinable()) completion_.join();
}

void LaneQueue::loop() {
  for (;;) {
    Slot* slot = nullptr;
    {
      std::unique_lock lock(mutex_);
      cv_.wait(lock, [&] { return stopping_ || !fifo_.empty(); });
      if (fifo_.empty()) return;
      slot = fifo_.front();
      fifo_.pop_front();
    }
    complete_(*slot, *executor_);
  }
}

}  // namespace streampipe::pipeline::detail
