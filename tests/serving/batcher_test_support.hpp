// SPDX-License-Identifier: Apache-2.0
#pragma once
// Test support shared by the batcher's host tests: a tiny exact model, a client with its
// own buffers, a gate that holds a lane inside the model, and result helpers.

#include "streampipe/serving/batcher.hpp"
#include "streampipe/serving/host_executor.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <future>
#include <mutex>
#include <numeric>
#include <span>
#include <vector>

namespace streampipe::serving::test_support {

using namespace std::chrono_literals;

inline constexpr std::size_t kIn = 37;   // odd sizes on purpose
inline constexpr std::size_t kOut = 19;

// out[j] = 2 * sum(in) + in[j % kIn] * (j + 1): exact for small integers, and each row
// depends only on itself, so padding and batching cannot change a request's result.
inline void reference(std::span<const float> in, std::span<float> out) {
  float sum = 0;
  for (float v : in) sum += v;
  for (std::size_t j = 0; j < kOut; ++j) out[j] = 2 * sum + in[j % kIn] * static_cast<float>(j + 1);
}

inline void model(std::span<const float> in, std::span<float> out, std::size_t rows) {
  for (std::size_t r = 0; r < rows; ++r) reference(in.subspan(r * kIn, kIn), out.subspan(r * kOut, kOut));
}

// Holds every run() until opened; counts the runs that have entered.
struct Gate {
  std::mutex mu;
  std::condition_variable cv;
  bool open = false;
  int entered = 0;
  void pass() {
    std::unique_lock lock(mu);
    ++entered;
    cv.notify_all();
    cv.wait(lock, [&] { return open; });
  }
  void wait_entered(int n) {
    std::unique_lock lock(mu);
    ASSERT_TRUE(cv.wait_for(lock, 10s, [&] { return entered >= n; })) << "runs never started";
  }
  void release() {
    std::lock_guard lock(mu);
    open = true;
    cv.notify_all();
  }
};

// The model, held at `gate` by every batch whose first input is 1000: only the requests
// a test sends that way, never the warm-up runs on zeros.
inline HostModel gated_model(Gate& gate) {
  return [&gate](std::span<const float> in, std::span<float> out, std::size_t rows) {
    model(in, out, rows);
    if (in[0] == 1000.0f) gate.pass();
  };
}

struct Client {
  std::vector<float> in = std::vector<float>(kIn), out = std::vector<float>(kOut, -12345.0f);
  explicit Client(float id = 0) { std::iota(in.begin(), in.end(), id); }
  Request request(int priority = 0, std::chrono::microseconds timeout = 0us) {
    return Request{in, out, priority, timeout};
  }
  void expect_correct() const {
    std::vector<float> want(kOut);
    reference(in, want);
    EXPECT_EQ(out, want);
  }
};

inline RequestStatus status_of(std::future<RequestResult>& f) {
  const auto r = f.get();
  EXPECT_FALSE(r.ok()) << "the request succeeded";
  EXPECT_EQ(r.ok(), r.error.empty());
  return r.status;
}

// Waits for a request that must succeed.
inline RequestResult ok(std::future<RequestResult>& f) {
  auto r = f.get();
  EXPECT_TRUE(r.ok()) << to_string(r.status) << ": " << r.error;
  return r;
}
inline RequestResult ok(std::future<RequestResult>&& f) { return ok(f); }

inline BatcherOptions options(std::size_t max_batch, std::chrono::microseconds delay) {
  BatcherOptions o;
  o.policy.max_batch_size = max_batch;
  o.policy.max_queue_delay = delay;
  return o;
}

}  // namespace streampipe::serving::test_support
