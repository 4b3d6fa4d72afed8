// SPDX-License-Identifier: Apache-2.0
#pragma once
// One lane's slots in flight. push() enqueues a slot's work on the lane's executor and the
// slot on a FIFO under one lock, so the FIFO has the stream's order; a completion thread
// takes the slots out in that order and hands each to `complete`, which waits for it.

#include "closable_queue.hpp"
#include "lane_executor.hpp"
#include "slot.hpp"

#include <functional>
#include <memory>
#include <thread>

namespace streampipe::pipeline::detail {

class LaneQueue {
 public:
  using Complete = std::function<void(Slot&, LaneExecutor&)>;

  // Starts the completion thread. Throws std::system_error saying so when it cannot (a
  // process limit); the executor is then destroyed.
  LaneQueue(std::unique_ptr<LaneExecutor> executor, Complete complete);
  ~LaneQueue();  // stop(), then the executor goes
  LaneQueue(const LaneQueue&) = delete;
  LaneQueue& operator=(const LaneQueue&) = delete;

  // Enqueues slot.work on the executor (which never throws) and queues the slot for
  // completion. Returns slot.work.inputs_fenced as the executor left it: read here, since
  // the slot may complete and be reused as soon as the lock is dropped.
  bool push(Slot& slot);
  // Completes every slot already pushed, then joins the completion thread. Idempotent.
  void stop();

  [[nodiscard]] LaneExecutor& executor() noexcept { return *executor_; }

 private:
  void loop();

  std::unique_ptr<LaneExecutor> executor_;
  Complete complete_;
  ClosableQueue<Slot*> fifo_;
  std::thread completion_;
};

}  // namespace streampipe::pipeline::detail
