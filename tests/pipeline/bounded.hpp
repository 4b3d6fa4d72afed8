// SPDX-License-Identifier: Apache-2.0
#pragma once
// Bounded waits for tests of code that might hang (the engine's faults): a wait that runs
// out fails the test with a message instead of blocking until ctest's timeout.
//
//   const auto r = testing::result_within(future);         // nullopt (and a failure) if late
//   testing::finishes_within("drain", [&] { engine.drain(); });
//
// finishes_within() ends the process when the body does not return in time: the body's
// thread may hold locks, and the objects it uses would be destroyed under it.

#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <functional>
#include <future>
#include <optional>
#include <string>
#include <thread>

namespace streampipe::testing {

// Far beyond what any of these tests needs on a loaded 2-core machine under ThreadSanitizer.
inline constexpr std::chrono::seconds kHangLimit{60};

// The future's value, or nullopt and a test failure when it is not ready within `limit`.
template <typename T>
[[nodiscard]] std::optional<T> result_within(std::future<T>& future, std::chrono::milliseconds limit = kHangLimit) {
  if (future.wait_for(limit) != std::future_status::ready) {
    ADD_FAILURE() << "a future was not resolved within " << limit.count() << " ms";
    return std::nullopt;
  }
  return future.get();
}

// Runs `body` on a thread of its own and waits at most `limit` for it; rethrows what it
// threw. When it does not return in time the test fails and the process ends at once.
inline void finishes_within(const std::string& what, std::function<void()> body,
                            std::chrono::milliseconds limit = kHangLimit) {
  std::promise<void> done;
  auto finished = done.get_future();
  std::thread worker([&done, &body] {
    try {
      body();
      done.set_value();
    } catch (...) {
      done.set_exception(std::current_exception());
    }
  });
  if (finished.wait_for(limit) != std::future_status::ready) {
    ADD_FAILURE() << what << " did not return within " << limit.count() << " ms: a hang";
    std::fflush(stdout);
    std::fflush(stderr);
    std::_Exit(EXIT_FAILURE);
  }
  worker.join();
  finished.get();
}

}  // namespace streampipe::testing
