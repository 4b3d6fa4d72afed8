// SPDX-License-Identifier: Apache-2.0
#include "worker_pool.hpp"

namespace streampipe::pipeline::detail {

WorkerPool::WorkerPool(int threads) {
  threads_.reserve(static_cast<std::size_t>(threads));
  for (int i = 0; i < threads; ++i) threads_.emplace_back([this] { loop(); });
}

WorkerPool::~WorkerPool() {
  tasks_.close();
  for (auto& t : threads_) t.join();
}

void WorkerPool::post(std::function<void()> task) { tasks_.push(std::move(task)); }

void WorkerPool::loop() {
  while (auto task = tasks_.pop()) (*task)();
}

}  // namespace streampipe::pipeline::detail
