// SPDX-License-Identifier: Apache-2.0
#pragma once
// A PartQueue's spawn for tests: each task on a real thread of its own, all joined when the
// spawner goes (declare it before the queue), with a count of the tasks asked for.

#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace streampipe::testing {

struct ThreadSpawner {
  std::mutex mutex;
  std::vector<std::thread> threads;
  int spawned = 0;
  ~ThreadSpawner() {
    for (auto& t : threads) t.join();
  }
  auto spawner() {
    return [this](std::function<void()> task) {
      std::lock_guard lock(mutex);
      ++spawned;
      threads.emplace_back(std::move(task));
    };
  }
};

}  // namespace streampipe::testing
