// SPDX-License-Identifier: Apache-2.0
#include "lane_queue.hpp"

#include <system_error>
#include <utility>

namespace streampipe::pipeline::detail {

LaneQueue::LaneQueue(std::unique_ptr<LaneExecutor> executor, Complete complete)
    : executor_(std::move(executor)), complete_(std::move(complete)) {
  try {
    completion_ = std::thread([this] { loop(); });
  } catch (const std::system_error& e) {
    throw std::system_error(e.code(), "cannot start a lane's completion thread");
  }
}

LaneQueue::~LaneQueue() { stop(); }

bool LaneQueue::push(Slot& slot) {
  bool fenced = false;
  fifo_.push(&slot, [&] {
    executor_->enqueue(slot.work);
    fenced = slot.work.inputs_fenced;
  });
  return fenced;
}

void LaneQueue::stop() {
  fifo_.close();
  if (completion_.joinable()) completion_.join();
}

void LaneQueue::loop() {
  while (const auto slot = fifo_.pop()) complete_(**slot, *executor_);
}

}  // namespace streampipe::pipeline::detail
