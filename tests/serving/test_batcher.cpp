// SPDX-License-Identifier: Apache-2.0
// The batcher's requests: correct results from many threads, batches formed by size and delay,
// refusals (shape, full queue, timeout), priority, failures confined to their batch, shutdown.
#include "streampipe/serving/batcher.hpp"
#include "streampipe/serving/host_executor.hpp"

#include "batcher_test_support.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <future>
#include <mutex>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace streampipe::serving {
namespace {

using namespace std::chrono_literals;
using namespace test_support;

void many_threads_get_correct_results(std::chrono::microseconds idle_spin) {
  HostExecutor exec(kIn, kOut, 3, model);
  auto o = options(16, 200us);
  o.max_queue_size = 4096;
  o.idle_spin = idle_spin;
  DynamicBatcher batcher(exec, o);
  constexpr int kThreads = 8, kPerThread = 150;
  std::vector<std::thread> threads;
  std::atomic<int> wrong{0}, batched{0};
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      std::mt19937 rng(static_cast<unsigned>(t));
      std::uniform_int_distribution<int> value(-50, 50);
      for (int i = 0; i < kPerThread; ++i) {
        Client c;
        for (auto& v : c.in) v = static_cast<float>(value(rng));
        const auto result = batcher.submit(c.request()).get();
        if (!result.ok()) ++wrong;
        std::vector<float> want(kOut);
        reference(c.in, want);
        if (c.out != want) ++wrong;
        if (result.batch_size > 1) ++batched;
        if (result.bucket < result.batch_size) ++wrong;
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_GT(batched.load(), 0) << "8 concurrent clients never shared a batch";
  const auto s = batcher.stats();
  EXPECT_EQ(s.completed, std::size_t{kThreads * kPerThread});
  EXPECT_EQ(s.failed + s.timed_out + s.rejected + s.queue_full, 0u);
}

TEST(Batcher, ManyThreadsGetCorrectResults) { many_threads_get_correct_results(0us); }

// Idle lanes poll the queue instead of sleeping: the same results, no lost request.
TEST(Batcher, ManyThreadsGetCorrectResultsWithPollingLanes) { many_threads_get_correct_results(300us); }

TEST(Batcher, ShutdownDoesNotWaitForAPollingLane) {
  HostExecutor exec(kIn, kOut, 2, model);
  auto o = options(4, 0us);
  o.idle_spin = std::chrono::microseconds(std::chrono::seconds(60));
  std::optional<DynamicBatcher> batcher(std::in_place, exec, o);
  Client c(3);
  (void)ok(batcher->submit(c.request()));
  c.expect_correct();
  // Both lanes now poll for up to a minute; shutdown must stop them at once.
  const auto t0 = Clock::now();
  batcher.reset();
  EXPECT_LT(Clock::now() - t0, 10s);
}

TEST(Batcher, FullBatchGoesAtOnceAndSmallOnePadsAfterTheDelay) {
  HostExecutor exec(kIn, kOut, 1, model);
  // The delay is long so that a slow (sanitized, loaded) machine still queues all 8 before
  // the first request's wait runs out.
  DynamicBatcher batcher(exec, options(8, 250ms));
  std::vector<Client> clients(8);
  std::vector<std::future<RequestResult>> futures;
  for (auto& c : clients) futures.push_back(batcher.submit(c.request()));
  for (auto& f : futures) {
    const auto r = ok(f);
    EXPECT_EQ(r.batch_size, 8u);
    EXPECT_EQ(r.bucket, 8u);
  }
  std::vector<Client> three(3);
  futures.clear();
  const auto t0 = Clock::now();
  for (auto& c : three) futures.push_back(batcher.submit(c.request()));
  for (auto& f : futures) {
    const auto r = ok(f);
    EXPECT_EQ(r.batch_size, 3u);
    EXPECT_EQ(r.bucket, 4u);  // padded to its bucket
    EXPECT_GE(r.dispatched - r.submitted, 240ms);
  }
  EXPECT_GE(Clock::now() - t0, 240ms);
  for (const auto& c : three) c.expect_correct();
  const auto s = batcher.stats();
  EXPECT_EQ(s.padded_rows, 1u);
  EXPECT_EQ(s.batches, 2u);
}

TEST(Batcher, PreferredSizeDoesNotWaitForTheDelay) {
  HostExecutor exec(kIn, kOut, 1, model);
  auto o = options(16, std::chrono::microseconds(std::chrono::seconds(60)));
  o.policy.preferred_batch_sizes = {4};
  DynamicBatcher batcher(exec, o);
  std::vector<Client> clients(4);
  std::vector<std::future<RequestResult>> futures;
  for (auto& c : clients) futures.push_back(batcher.submit(c.request()));
  for (auto& f : futures) {
    ASSERT_EQ(f.wait_for(10s), std::future_status::ready);
    EXPECT_EQ(ok(f).batch_size, 4u);
  }
  for (const auto& c : clients) c.expect_correct();
}

TEST(Batcher, WrongShapeIsRejectedAloneWithAMessage) {
  HostExecutor exec(kIn, kOut, 1, model);
  DynamicBatcher batcher(exec, options(4, 0us));
  std::vector<float> short_in(3), out(kOut);
  const auto bad = batcher.submit(Request{short_in, out}).get();
  EXPECT_EQ(bad.status, RequestStatus::rejected);
  EXPECT_NE(bad.error.find("input has 3 elements, the model takes 37"), std::string::npos) << bad.error;
  try {
    bad.throw_if_error();
    FAIL() << "throw_if_error did not throw";
  } catch (const RequestError& e) {
    EXPECT_EQ(e.status(), RequestStatus::rejected);
  }
  std::vector<float> in(kIn), short_out(kOut - 1);
  auto bad_out = batcher.submit(Request{in, short_out});
  EXPECT_EQ(status_of(bad_out), RequestStatus::rejected);
  Client c(5);
  auto bad_priority = batcher.submit(c.request(3));
  EXPECT_EQ(status_of(bad_priority), RequestStatus::rejected);
  Client good(7);
  (void)ok(batcher.submit(good.request()));
  good.expect_correct();
  EXPECT_EQ(batcher.stats().rejected, 3u);
}

TEST(Batcher, FullQueueRejectsImmediately) {
  Gate gate;
  HostExecutor exec(kIn, kOut, 1, gated_model(gate));
  auto o = options(1, 0us);
  o.max_queue_size = 4;
  DynamicBatcher batcher(exec, o);
  Client first(1000);
  auto f0 = batcher.submit(first.request());
  gate.wait_entered(1);  // the lane is busy; nothing more can be dispatched
  std::vector<Client> queued(4);
  std::vector<std::future<RequestResult>> futures;
  for (auto& c : queued) futures.push_back(batcher.submit(c.request()));
  Client extra;
  auto rejected = batcher.submit(extra.request());
  ASSERT_EQ(rejected.wait_for(0s), std::future_status::ready) << "a full queue must not block";
  EXPECT_EQ(status_of(rejected), RequestStatus::queue_full);
  gate.release();
  (void)ok(f0);
  for (auto& f : futures) (void)ok(f);
  for (const auto& c : queued) c.expect_correct();
  EXPECT_EQ(batcher.stats().queue_full, 1u);
}

TEST(Batcher, TimedOutRequestFailsWhileTheLaneIsBusy) {
  Gate gate;
  HostExecutor exec(kIn, kOut, 1, gated_model(gate));
  DynamicBatcher batcher(exec, options(1, 0us));
  Client first(1000), late(1), patient(2);
  auto f0 = batcher.submit(first.request());
  gate.wait_entered(1);
  auto f1 = batcher.submit(late.request(0, 20ms));
  auto f2 = batcher.submit(patient.request());
  // The lane stays blocked: the timeout must fire without it.
  ASSERT_EQ(f1.wait_for(10s), std::future_status::ready);
  EXPECT_EQ(status_of(f1), RequestStatus::timed_out);
  EXPECT_EQ(f2.wait_for(0s), std::future_status::timeout);
  gate.release();
  (void)ok(f0);
  (void)ok(f2);
  patient.expect_correct();
  EXPECT_EQ(late.out, std::vector<float>(kOut, -12345.0f)) << "a timed-out request must never run";
  EXPECT_EQ(batcher.stats().timed_out, 1u);
}

TEST(Batcher, DefaultTimeoutApplies) {
  Gate gate;
  HostExecutor exec(kIn, kOut, 1, gated_model(gate));
  auto o = options(1, 0us);
  o.default_timeout = 10ms;
  DynamicBatcher batcher(exec, o);
  Client first(1000), late(1);
  auto f0 = batcher.submit(first.request());
  gate.wait_entered(1);
  auto f1 = batcher.submit(late.request());
  ASSERT_EQ(f1.wait_for(10s), std::future_status::ready);
  EXPECT_EQ(status_of(f1), RequestStatus::timed_out);
  gate.release();
  (void)ok(f0);
}

TEST(Batcher, HigherPriorityRunsFirst) {
  Gate gate;
  std::mutex order_mu;
  std::vector<float> order;
  HostExecutor exec(kIn, kOut, 1, [&](std::span<const float> in, std::span<float> out, std::size_t rows) {
    model(in, out, rows);
    if (in[0] == 1000.0f) gate.pass();
    if (in[0] >= 1.0f && in[0] < 1000.0f) {
      std::lock_guard lock(order_mu);
      order.push_back(in[0]);
    }
  });
  auto o = options(1, 0us);
  o.priority_levels = 2;
  DynamicBatcher batcher(exec, o);
  Client first(1000), low_a(1), low_b(2), high(3);
  auto f0 = batcher.submit(first.request());
  gate.wait_entered(1);
  auto fa = batcher.submit(low_a.request(1));
  auto fb = batcher.submit(low_b.request(1));
  auto fh = batcher.submit(high.request(0));
  gate.release();
  for (auto* f : {&f0, &fa, &fb, &fh}) (void)ok(*f);
  EXPECT_EQ(order, (std::vector<float>{3, 1, 2}));
  high.expect_correct();
}

TEST(Batcher, FailingBatchFailsOnlyItsRequests) {
  HostExecutor exec(kIn, kOut, 2, [](std::span<const float> in, std::span<float> out, std::size_t rows) {
    for (std::size_t r = 0; r < rows; ++r)
      if (in[r * kIn] == -1.0f) throw std::runtime_error("poisoned row");
    model(in, out, rows);
  });
  DynamicBatcher batcher(exec, options(1, 0us));
  Client poisoned(-1), good(4);
  const auto fp = batcher.submit(poisoned.request()).get();
  EXPECT_EQ(fp.status, RequestStatus::failed);
  EXPECT_NE(fp.error.find("poisoned row"), std::string::npos) << fp.error;
  (void)ok(batcher.submit(good.request()));
  good.expect_correct();
  const auto s = batcher.stats();
  EXPECT_EQ(s.failed, 1u);
  EXPECT_EQ(s.completed, 1u);
}

TEST(Batcher, ShutdownDrainCompletesEveryQueuedRequest) {
  Gate gate;
  HostExecutor exec(kIn, kOut, 1, gated_model(gate));
  DynamicBatcher batcher(exec, options(4, std::chrono::microseconds(std::chrono::seconds(60))));
  Client first(1000);
  auto f0 = batcher.submit(first.request());
  // Alone, it would wait 60 s for company: fill a batch so it goes now.
  std::vector<Client> fill(3);
  std::vector<std::future<RequestResult>> fill_futures;
  for (auto& c : fill) fill_futures.push_back(batcher.submit(c.request()));
  gate.wait_entered(1);
  std::vector<Client> queued(10);
  std::vector<std::future<RequestResult>> futures;
  for (std::size_t i = 0; i < queued.size(); ++i) {
    queued[i] = Client(static_cast<float>(i));
    futures.push_back(batcher.submit(queued[i].request()));
  }
  auto stopper = std::async(std::launch::async, [&] { batcher.shutdown(ShutdownMode::drain); });
  gate.release();
  ASSERT_EQ(stopper.wait_for(30s), std::future_status::ready) << "shutdown hung";
  for (auto& f : futures) {
    ASSERT_EQ(f.wait_for(0s), std::future_status::ready);
    (void)ok(f);
  }
  for (auto& f : fill_futures) (void)ok(f);
  (void)ok(f0);
  for (const auto& c : queued) c.expect_correct();
  Client after;
  auto rejected = batcher.submit(after.request());
  EXPECT_EQ(status_of(rejected), RequestStatus::shut_down);
}

TEST(Batcher, ShutdownCancelFailsQueuedAndFinishesInFlight) {
  Gate gate;
  HostExecutor exec(kIn, kOut, 1, gated_model(gate));
  DynamicBatcher batcher(exec, options(1, 0us));
  Client first(1000);
  auto f0 = batcher.submit(first.request());
  gate.wait_entered(1);
  std::vector<Client> queued(10);
  std::vector<std::future<RequestResult>> futures;
  for (auto& c : queued) futures.push_back(batcher.submit(c.request()));
  auto stopper = std::async(std::launch::async, [&] { batcher.shutdown(ShutdownMode::cancel); });
  for (auto& f : futures) {
    ASSERT_EQ(f.wait_for(10s), std::future_status::ready) << "a queued future was left hanging";
    EXPECT_EQ(status_of(f), RequestStatus::cancelled);
  }
  gate.release();
  ASSERT_EQ(stopper.wait_for(30s), std::future_status::ready);
  (void)ok(f0);
  first.expect_correct();
  EXPECT_EQ(batcher.stats().cancelled, 10u);
}

TEST(Batcher, DestructorDrains) {
  HostExecutor exec(kIn, kOut, 2, model);
  std::vector<Client> clients(20);
  std::vector<std::future<RequestResult>> futures;
  {
    DynamicBatcher batcher(exec, options(8, std::chrono::microseconds(std::chrono::seconds(60))));
    for (auto& c : clients) futures.push_back(batcher.submit(c.request()));
  }
  for (auto& f : futures) {
    ASSERT_EQ(f.wait_for(0s), std::future_status::ready);
    (void)ok(f);
  }
  for (const auto& c : clients) c.expect_correct();
}

}  // namespace
}  // namespace streampipe::serving
