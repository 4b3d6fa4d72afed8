// SPDX-License-Identifier: Apache-2.0
// The batcher's asynchronous submit: a completion callback instead of a future.

#include "streampipe/serving/batcher.hpp"
#include "streampipe/serving/host_executor.hpp"

#include "batcher_test_support.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <thread>
#include <vector>

namespace streampipe::serving {
namespace {

using namespace std::chrono_literals;
using namespace test_support;

// Collects one callback's result and the thread it ran on.
struct Outcome {
  std::mutex mu;
  std::condition_variable cv;
  std::optional<RequestResult> result;
  std::thread::id thread;
  int calls = 0;

  Completion callback() {
    return [this](RequestResult&& r) {
      std::lock_guard lock(mu);
      result = std::move(r);
      thread = std::this_thread::get_id();
      ++calls;
      cv.notify_all();
    };
  }
  RequestResult wait() {
    std::unique_lock lock(mu);
    EXPECT_TRUE(cv.wait_for(lock, 10s, [&] { return result.has_value(); })) << "the callback never ran";
    return result.value_or(RequestResult{RequestStatus::failed, "no callback", 0, 0, 0, {}, {}, {}});
  }
};

TEST(BatcherCallbacks, CallbackGetsTheResultOnceOnALane) {
  HostExecutor exec(kIn, kOut, 2, model);
  DynamicBatcher batcher(exec, options(4, 0us));
  Client c(5);
  Outcome outcome;
  batcher.submit(c.request(), outcome.callback());
  const auto r = outcome.wait();
  EXPECT_TRUE(r.ok()) << r.error;
  c.expect_correct();
  EXPECT_NE(outcome.thread, std::this_thread::get_id());
  batcher.shutdown();
  EXPECT_EQ(outcome.calls, 1);
}

TEST(BatcherCallbacks, RejectionIsCalledBackBeforeSubmitReturns) {
  HostExecutor exec(kIn, kOut, 1, model);
  DynamicBatcher batcher(exec, options(4, 0us));
  std::vector<float> short_input(kIn - 1), out(kOut);
  Outcome outcome;
  batcher.submit(Request{short_input, out}, outcome.callback());
  {
    std::lock_guard lock(outcome.mu);
    ASSERT_TRUE(outcome.result.has_value()) << "a bad request must be refused at once";
    EXPECT_EQ(outcome.result->status, RequestStatus::rejected);
    EXPECT_NE(outcome.result->error.find("input has 36 elements"), std::string::npos) << outcome.result->error;
    EXPECT_EQ(outcome.thread, std::this_thread::get_id());
  }
  EXPECT_THROW(batcher.submit(Client().request(), Completion{}), std::invalid_argument);
  EXPECT_EQ(batcher.stats().rejected, 1u);
}

// What the completions of one batch submit enters the queue together: a second lane that
// polls the queue cannot split it, even when the callback pauses between its submits.
TEST(BatcherCallbacks, SubmitsFromOneBatchsCallbacksFormOneBatch) {
  HostExecutor exec(kIn, kOut, 2, model);
  auto o = options(8, 0us);
  o.idle_spin = std::chrono::microseconds(std::chrono::seconds(5));
  DynamicBatcher batcher(exec, o);
  Client first(1), second(2), third(3);
  Outcome o2, o3;
  batcher.submit(first.request(), [&](RequestResult&& r) {
    EXPECT_TRUE(r.ok()) << r.error;
    batcher.submit(second.request(), o2.callback());
    std::this_thread::sleep_for(30ms);  // a polling lane would have taken `second` alone by now
    batcher.submit(third.request(), o3.callback());
  });
  const auto r2 = o2.wait(), r3 = o3.wait();
  ASSERT_TRUE(r2.ok() && r3.ok()) << r2.error << r3.error;
  EXPECT_EQ(r2.batch_size, 2u);
  EXPECT_EQ(r3.batch_size, 2u);
  second.expect_correct();
  third.expect_correct();
  EXPECT_EQ(batcher.stats().batches, 2u);
}

TEST(BatcherCallbacks, ThrowingCallbackDoesNotHurtItsBatchOrTheBatcher) {
  Gate gate;
  HostExecutor exec(kIn, kOut, 1, gated_model(gate));
  DynamicBatcher batcher(exec, options(4, 0us));
  Client blocker(1000), thrower(1), calm(2), later(3);
  auto f0 = batcher.submit(blocker.request());
  gate.wait_entered(1);
  Outcome calm_outcome;
  batcher.submit(thrower.request(), [](RequestResult&&) { throw std::runtime_error("client bug"); });
  batcher.submit(calm.request(), calm_outcome.callback());
  gate.release();
  (void)ok(f0);
  const auto r = calm_outcome.wait();
  EXPECT_TRUE(r.ok()) << r.error;
  EXPECT_EQ(r.batch_size, 2u) << "the throwing callback's request shared calm's batch";
  calm.expect_correct();
  (void)ok(batcher.submit(later.request()));
  later.expect_correct();
}

TEST(BatcherCallbacks, TimeoutAndCancellationAreCalledBack) {
  Gate gate;
  HostExecutor exec(kIn, kOut, 1, gated_model(gate));
  std::optional<DynamicBatcher> batcher(std::in_place, exec, options(1, 0us));
  Client blocker(1000), late(1), queued(2);
  auto f0 = batcher->submit(blocker.request());
  gate.wait_entered(1);
  Outcome timed_out, cancelled;
  batcher->submit(late.request(0, 20ms), timed_out.callback());
  batcher->submit(queued.request(), cancelled.callback());
  EXPECT_EQ(timed_out.wait().status, RequestStatus::timed_out);
  std::thread stopper([&] { batcher->shutdown(ShutdownMode::cancel); });
  EXPECT_EQ(cancelled.wait().status, RequestStatus::cancelled);
  gate.release();
  stopper.join();
  (void)ok(f0);
  EXPECT_EQ(late.out, std::vector<float>(kOut, -12345.0f));
  EXPECT_EQ(queued.out, std::vector<float>(kOut, -12345.0f));
  Outcome after;
  batcher->submit(Client().request(), after.callback());
  EXPECT_EQ(after.wait().status, RequestStatus::shut_down);
}

// A closed loop of asynchronous clients (perf_analyzer's async mode): every completion
// submits the client's next request from the callback. Every result is right, nothing is
// lost, and after the first round batches never split.
TEST(BatcherCallbacks, ClosedLoopOfAsyncClients) {
  HostExecutor exec(kIn, kOut, 2, model);
  auto o = options(16, 0us);
  o.idle_spin = 200us;
  DynamicBatcher batcher(exec, o);
  constexpr int kClients = 8, kRounds = 200;
  struct AsyncClient {
    Client c;
    int round = 0;
    std::size_t last_batch = 0, batch_grew_or_kept = 0;
  };
  std::vector<AsyncClient> clients(kClients);
  std::mutex mu;
  std::condition_variable cv;
  int running = kClients;
  std::atomic<int> wrong{0}, shrank{0}, finished{0};
  std::function<void(AsyncClient&)> issue = [&](AsyncClient& a) {
    for (std::size_t i = 0; i < kIn; ++i) a.c.in[i] = static_cast<float>((a.round * 7 + i) % 41) - 20.0f;
    batcher.submit(a.c.request(), [&, ap = &a](RequestResult&& r) {
      AsyncClient& self = *ap;
      std::vector<float> want(kOut);
      reference(self.c.in, want);
      if (!r.ok() || self.c.out != want) ++wrong;
      // Batches only merge (a lane may take a request of the first round alone) until
      // clients start to leave.
      if (self.round > 0 && r.batch_size < self.last_batch && finished.load() == 0) ++shrank;
      self.last_batch = r.batch_size;
      if (++self.round < kRounds) {
        issue(self);
        return;
      }
      ++finished;
      std::lock_guard lock(mu);
      if (--running == 0) cv.notify_all();
    });
  };
  for (auto& a : clients) issue(a);
  {
    std::unique_lock lock(mu);
    ASSERT_TRUE(cv.wait_for(lock, 60s, [&] { return running == 0; }));
  }
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_EQ(shrank.load(), 0);
  const auto s = batcher.stats();
  EXPECT_EQ(s.completed, std::size_t{kClients * kRounds});
  EXPECT_EQ(s.failed + s.timed_out + s.rejected + s.queue_full, 0u);
}

}  // namespace
}  // namespace streampipe::serving
