// SPDX-License-Identifier: Apache-2.0
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

TEST(Batcher, EveryPlanIsFirstUsedInWarmup) {
  HostExecutor exec(kIn, kOut, 3, model);
  auto o = options(8, 100us);
  o.policy.preferred_batch_sizes = {2, 5};
  DynamicBatcher batcher(exec, o);
  EXPECT_EQ(batcher.buckets(), (std::vector<std::size_t>{2, 5, 8}));
  const auto warm = exec.warmup_uses();
  ASSERT_EQ(warm.size(), 3u);
  for (const auto& [bucket, uses] : warm) EXPECT_EQ(uses, 3u) << "bucket " << bucket << " on every lane";
  std::vector<std::thread> threads;
  for (int t = 0; t < 6; ++t)
    threads.emplace_back([&] {
      for (int i = 0; i < 50; ++i) {
        Client c(static_cast<float>(i));
        (void)ok(batcher.submit(c.request()));
        c.expect_correct();
      }
    });
  for (auto& t : threads) t.join();
  for (const auto& [bucket, uses] : exec.run_uses()) {
    EXPECT_TRUE(warm.contains(bucket)) << "bucket " << bucket << " ran without a warm-up";
    EXPECT_GT(uses, 0u);
  }
}

TEST(Batcher, LanesRunConcurrently) {
  HostExecutor exec(kIn, kOut, 3, [](std::span<const float> in, std::span<float> out, std::size_t rows) {
    model(in, out, rows);
    std::this_thread::sleep_for(5ms);
  });
  DynamicBatcher batcher(exec, options(2, 0us));
  std::vector<Client> clients(24);
  std::vector<std::future<RequestResult>> futures;
  for (auto& c : clients) futures.push_back(batcher.submit(c.request()));
  std::vector<bool> lanes_used(3, false);
  for (auto& f : futures) lanes_used[ok(f).lane] = true;
  EXPECT_GE(exec.max_concurrent_runs(), 2u);
  EXPECT_EQ(std::count(lanes_used.begin(), lanes_used.end(), true), 3);
}

TEST(Batcher, RecordsFeedTheLatencyReport) {
  HostExecutor exec(kIn, kOut, 2, model);
  auto o = options(4, 50us);
  o.record_queries = true;
  DynamicBatcher batcher(exec, o);
  std::vector<Client> clients(30);
  std::vector<std::future<RequestResult>> futures;
  for (auto& c : clients) futures.push_back(batcher.submit(c.request()));
  for (auto& f : futures) (void)ok(f);
  report::LatencyRun run;
  run.queries = batcher.take_records();
  run.wall_ms = 1.0;
  ASSERT_EQ(run.queries.size(), 30u);
  for (const auto& q : run.queries) {
    EXPECT_LE(q.submit_ms, q.enqueue_begin_ms);
    EXPECT_LE(q.enqueue_begin_ms, q.enqueue_end_ms);
    EXPECT_LE(q.enqueue_begin_ms, q.complete_ms);
    EXPECT_GE(q.batch, 1u);
    EXPECT_FALSE(q.compute_ms.has_value());
  }
  const auto s = report::summarize(run);
  EXPECT_EQ(s.latency.count, 30u);
  EXPECT_TRUE(batcher.take_records().empty());
}

// An executor whose batches "run" between launch() and finish(): wait() blocks until the
// test lets the batch in slot 0 end, and every call is logged, so the lane's order of
// launch, wait and finish can be checked. Inputs whose first value is -1 fail in finish().
class LoggingExecutor final : public BatchExecutor {
 public:
  std::size_t lanes() const override { return 1; }
  std::size_t input_size() const override { return kIn; }
  std::size_t output_size() const override { return kOut; }
  std::string device_name() const override { return "logging"; }
  report::SyncMode sync_mode() const override { return report::SyncMode::blocking; }
  void prepare(std::span<const std::size_t>) override {}
  void launch(std::size_t, std::size_t slot, const Batch& batch) override {
    std::lock_guard lock(mu);
    log.push_back("L" + std::to_string(slot) + ":" + std::to_string(batch.size()));
    launched = true;
    cv.notify_all();
  }
  void wait(std::size_t, std::size_t slot) noexcept override {
    std::unique_lock lock(mu);
    log.push_back("W" + std::to_string(slot));
    if (slot == 0) cv.wait(lock, [&] { return first_may_end; });
  }
  BatchTiming finish(std::size_t, std::size_t slot, const Batch& batch) override {
    {
      std::lock_guard lock(mu);
      log.push_back("F" + std::to_string(slot));
    }
    for (std::size_t r = 0; r < batch.size(); ++r) {
      if (batch.inputs[r][0] == -1.0f) throw std::runtime_error("the device lost this batch");
      reference(batch.inputs[r], batch.outputs[r]);
    }
    return {};
  }
  void wait_launched() {
    std::unique_lock lock(mu);
    ASSERT_TRUE(cv.wait_for(lock, 10s, [&] { return launched; }));
  }
  void let_first_end() {
    std::lock_guard lock(mu);
    first_may_end = true;
    cv.notify_all();
  }
  std::vector<std::string> logged() {
    std::lock_guard lock(mu);
    return log;
  }

 private:
  std::mutex mu;
  std::condition_variable cv;
  bool launched = false, first_may_end = false;
  std::vector<std::string> log;
};

TEST(Batcher, LaneLaunchesTheNextBatchBeforeCompletingTheFinishedOne) {
  LoggingExecutor exec;
  DynamicBatcher batcher(exec, options(4, 0us));
  Client first(1), second(2), third(3);
  auto f1 = batcher.submit(first.request());
  exec.wait_launched();
  // Queued while the first batch runs: they go together, launched before the first
  // batch's requests are completed.
  auto f2 = batcher.submit(second.request());
  auto f3 = batcher.submit(third.request());
  EXPECT_EQ(f1.wait_for(50ms), std::future_status::timeout);
  exec.let_first_end();
  for (auto* f : {&f1, &f2, &f3}) (void)ok(*f);
  for (const auto* c : {&first, &second, &third}) c->expect_correct();
  const auto log = exec.logged();
  const std::vector<std::string> want = {"L0:1", "W0", "L1:2", "F0", "W1", "F1"};
  ASSERT_GE(log.size(), want.size());
  EXPECT_EQ(std::vector<std::string>(log.begin(), log.begin() + static_cast<std::ptrdiff_t>(want.size())), want);
}

TEST(Batcher, BatchFailingInFinishFailsOnlyItsRequests) {
  LoggingExecutor exec;
  exec.let_first_end();
  DynamicBatcher batcher(exec, options(1, 0us));
  Client good(1), bad(-1), after(2);
  auto fg = batcher.submit(good.request());
  auto fb = batcher.submit(bad.request());
  auto fa = batcher.submit(after.request());
  (void)ok(fg);
  EXPECT_EQ(status_of(fb), RequestStatus::failed);
  (void)ok(fa);
  good.expect_correct();
  after.expect_correct();
  EXPECT_EQ(batcher.stats().failed, 1u);
}

// Runs the host model and remembers which rows of each batch arrived marked pinned; refuses
// pinned requests whose first input is negative, as a GPU executor refuses memory that is
// not page-locked.
class PinnedClaimsExecutor final : public BatchExecutor {
 public:
  std::size_t lanes() const override { return 1; }
  std::size_t input_size() const override { return kIn; }
  std::size_t output_size() const override { return kOut; }
  std::string device_name() const override { return "claims"; }
  report::SyncMode sync_mode() const override { return report::SyncMode::blocking; }
  std::optional<std::string> refusal(const Request& request) const override {
    if (request.pinned && request.input[0] < 0) return "its input is not pinned";
    return std::nullopt;
  }
  void prepare(std::span<const std::size_t>) override {}
  void launch(std::size_t, std::size_t, const Batch& batch) override {
    std::lock_guard lock(mu_);
    for (std::size_t r = 0; r < batch.size(); ++r) seen_.push_back(batch.is_pinned(r));
  }
  void wait(std::size_t, std::size_t) noexcept override {}
  BatchTiming finish(std::size_t, std::size_t, const Batch& batch) override {
    for (std::size_t r = 0; r < batch.size(); ++r) reference(batch.inputs[r], batch.outputs[r]);
    return {};
  }
  std::vector<bool> seen() {
    std::lock_guard lock(mu_);
    return seen_;
  }

 private:
  std::mutex mu_;
  std::vector<bool> seen_;
};

TEST(Batcher, PinnedClaimsReachTheExecutorWhichMayRefuseThem) {
  PinnedClaimsExecutor exec;
  DynamicBatcher batcher(exec, options(1, 0us));
  Client plain(1), pinned(2), refused(-3);
  Request pinned_request = pinned.request(), refused_request = refused.request();
  pinned_request.pinned = refused_request.pinned = true;
  (void)ok(batcher.submit(plain.request()));
  (void)ok(batcher.submit(pinned_request));
  const auto r = batcher.submit(refused_request).get();
  EXPECT_EQ(r.status, RequestStatus::rejected);
  EXPECT_EQ(r.error, "request rejected: its input is not pinned");
  // Unmarked, the same memory is fine.
  (void)ok(batcher.submit(refused.request()));
  plain.expect_correct();
  pinned.expect_correct();
  refused.expect_correct();
  EXPECT_EQ(exec.seen(), (std::vector<bool>{false, true, false}));
  EXPECT_EQ(batcher.stats().rejected, 1u);
}

TEST(Batcher, GatherAndScatterCopyEveryRowOrThoseNotPinned) {
  std::vector<float> a = {1, 2}, b = {3, 4}, c = {5, 6};
  std::vector<float> oa(2, -1), ob(2, -1), oc(2, -1);
  Batch batch;
  batch.bucket = 4;
  batch.inputs = {a, b, c};
  batch.outputs = {oa, ob, oc};
  batch.pinned = {false, true, false};
  std::vector<float> packed(8, 0);
  gather_inputs(batch, packed, 2, RowsToCopy::not_pinned);
  EXPECT_EQ(packed, (std::vector<float>{1, 2, 0, 0, 5, 6, 0, 0}));
  gather_inputs(batch, packed, 2);
  EXPECT_EQ(packed, (std::vector<float>{1, 2, 3, 4, 5, 6, 0, 0}));
  const std::vector<float> results = {10, 11, 12, 13, 14, 15, 16, 17};
  scatter_outputs(results, batch, 2, RowsToCopy::not_pinned);
  EXPECT_EQ(oa, (std::vector<float>{10, 11}));
  EXPECT_EQ(ob, (std::vector<float>{-1, -1}));
  EXPECT_EQ(oc, (std::vector<float>{14, 15}));
  scatter_outputs(results, batch, 2);
  EXPECT_EQ(ob, (std::vector<float>{12, 13}));
  std::vector<float> small(5);
  EXPECT_THROW(gather_inputs(batch, small, 2), std::invalid_argument);
}

TEST(Batcher, BadOptionsAreRefused) {
  HostExecutor exec(kIn, kOut, 1, model);
  auto o = options(4, 0us);
  o.max_queue_size = 0;
  EXPECT_THROW(DynamicBatcher(exec, o), std::invalid_argument);
  o = options(4, 0us);
  o.policy.preferred_batch_sizes = {5};
  EXPECT_THROW(DynamicBatcher(exec, o), std::invalid_argument);
  o = options(4, 0us);
  o.priority_levels = 0;
  EXPECT_THROW(DynamicBatcher(exec, o), std::invalid_argument);
}

}  // namespace
}  // namespace streampipe::serving
