// SPDX-License-Identifier: Apache-2.0
// The batcher's lanes against its executor: plans warmed up before use, lanes at once, the
// latency records, the next batch launched before the finished one completes, failures in
// finish(), pinned claims, and the rows gathered and scattered.
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
