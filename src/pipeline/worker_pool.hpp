// SPDX-License-Identifier: Apache-2.0
#pragma once
// A fixed set of host threads running posted tasks in FIFO order. The engine uses it for
// staging copies and host stages, so they overlap with the device work of other items.

#include "closable_queue.hpp"

#include <functional>
#include <thread>
#include <vector>

namespace streampipe::pipeline::detail {

class WorkerPool {
 public:
  // Starts `threads` threads. When one cannot start (a process limit: ulimit -u, a
  // container's pids limit) those started are joined and std::system_error names the count
  // reached ("cannot start host worker thread 38 of 48").
  explicit WorkerPool(int threads);
  ~WorkerPool();  // runs the tasks already posted, then joins
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  // Tasks must not throw (the engine wraps its own); a task that does terminates.
  void post(std::function<void()> task);
  [[nodiscard]] int size() const noexcept { return static_cast<int>(threads_.size()); }

 private:
  void loop();
  ClosableQueue<std::function<void()>> tasks_;
  std::vector<std::thread> threads_;
};

}  // namespace streampipe::pipeline::detail
