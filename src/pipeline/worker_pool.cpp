// SPDX-License-Identifier: Apache-2.0
#include "worker_pool.hpp"

#include <fmt/format.h>

#include <system_error>

namespace streampipe::pipeline::detail {

WorkerPool::WorkerPool(int threads) {
  threads_.reserve(static_cast<std::size_t>(threads));
  for (int i = 0; i < threads; ++i) {
    try {
      threads_.emplace_back([this] { loop(); });
    } catch (const std::system_error& e) {
      // Joinable threads left in the vector would end the process (std::terminate).
      tasks_.close();
      for (auto& t : threads_) t.join();
      throw std::system_error(e.code(), fmt::format("cannot start host worker thread {} of {}", i + 1, threads));
    }
  }
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
