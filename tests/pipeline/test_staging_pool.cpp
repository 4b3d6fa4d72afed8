// SPDX-License-Identifier: Apache-2.0
// The engine's input staging pool: the budget bounds what is lent, a waiting acquire takes
// back the oldest block whose copies are enqueued (and only such a block), one lease is
// always granted, stop() wakes waiters, stale leases are ignored, budget 0 keeps a block
// per slot. Plain memory (the host backend's): no GPU needed.

#include "bounded.hpp"
#include "staging_pool.hpp"
#include "support/sanitizers.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <future>
#include <map>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <utility>
#include <vector>

namespace streampipe::pipeline::detail {
namespace {

using namespace std::chrono_literals;

// A stand-in for the lanes: wait_inputs(slot) blocks until the test lets that slot's
// copies finish, and records who was waited for.
class FakeLanes {
 public:
  StagingPool::WaitInputs waiter() {
    return [this](int slot) {
      std::unique_lock lock(mutex_);
      waited_.push_back(slot);
      cv_.notify_all();
      cv_.wait(lock, [&] { return finished_.count(slot) > 0; });
    };
  }
  void finish_inputs(int slot) {
    {
      std::lock_guard lock(mutex_);
      finished_.insert({slot, true});
    }
    cv_.notify_all();
  }
  // Waits (bounded) until someone waits for `slot`.
  bool waited_for(int slot) {
    std::unique_lock lock(mutex_);
    return cv_.wait_for(lock, 5s, [&] { return std::find(waited_.begin(), waited_.end(), slot) != waited_.end(); });
  }
  std::vector<int> waited() {
    std::lock_guard lock(mutex_);
    return waited_;
  }

 private:
  std::mutex mutex_;
  std::condition_variable cv_;
  std::vector<int> waited_;
  std::map<int, bool> finished_;
};

// Leases of 1000 bytes for slots 0 and 1.
std::pair<StagingPool::Lease, StagingPool::Lease> lend_two(StagingPool& pool) {
  auto a = pool.acquire(1000, 0);
  auto b = pool.acquire(1000, 1);
  if (!a || !b) throw std::runtime_error("the pool refused a lease within its budget");
  return {*a, *b};
}

TEST(StagingPool, WaitsForTheOldestFencedBlockAndReusesIt) {
  FakeLanes lanes;
  StagingPool pool(false, 3000, 8, lanes.waiter());
  std::vector<StagingPool::Lease> lent;
  for (int slot = 0; slot < 3; ++slot) {
    auto lease = pool.acquire(1000, slot);
    ASSERT_TRUE(lease.has_value());
    ASSERT_NE(lease->data, nullptr);
    lease->data[999] = std::byte{1};  // the whole size is usable
    lent.push_back(*lease);
  }
  pool.fence(lent[1]);  // slot 1's copies are enqueued first, then slot 0's
  pool.fence(lent[0]);
  auto waiting = std::async(std::launch::async, [&] { return pool.acquire(1000, 5); });
  // Lent in the order 0, 1, 2: the oldest fenced one is slot 0's.
  ASSERT_TRUE(lanes.waited_for(0));
  EXPECT_EQ(waiting.wait_for(50ms), std::future_status::timeout);
  lanes.finish_inputs(0);
  const auto got = waiting.get();
  ASSERT_TRUE(got.has_value());
  EXPECT_EQ(got->data, lent[0].data);  // the block taken back is the one lent again
  EXPECT_EQ(lanes.waited(), std::vector<int>{0});
  EXPECT_EQ(pool.peak_bytes(), 3000u);
  pool.release(lent[0]);  // stale now: slot 0's completion must not take slot 5's block
  auto again = std::async(std::launch::async, [&] { return pool.acquire(1000, 6); });
  ASSERT_TRUE(lanes.waited_for(1));  // budget still spent: the next oldest fenced is slot 1's
  lanes.finish_inputs(1);
  ASSERT_TRUE(again.get().has_value());
  EXPECT_EQ(pool.peak_bytes(), 3000u);
}

TEST(StagingPool, BlocksStillBeingFilledAreNotWaitedForButTheirReleaseIs) {
  FakeLanes lanes;
  StagingPool pool(false, 2000, 4, lanes.waiter());
  const auto [a, b] = lend_two(pool);
  auto waiting = std::async(std::launch::async, [&] { return pool.acquire(1000, 2); });
  EXPECT_EQ(waiting.wait_for(50ms), std::future_status::timeout);
  pool.release(b);  // e.g. slot 1 failed before its copies were enqueued
  const auto got = waiting.get();
  ASSERT_TRUE(got.has_value());
  EXPECT_EQ(got->data, b.data);
  EXPECT_TRUE(lanes.waited().empty());
}

TEST(StagingPool, OneLeaseIsAlwaysGrantedWhateverItsSize) {
  FakeLanes lanes;
  StagingPool pool(false, 100, 2, lanes.waiter());
  auto big = pool.acquire(1 << 20, 0);
  ASSERT_TRUE(big.has_value());
  big->data[(1 << 20) - 1] = std::byte{7};
  pool.release(*big);
  // Growing the returned block for a larger request.
  auto bigger = pool.acquire(2 << 20, 1);
  ASSERT_TRUE(bigger.has_value());
  bigger->data[(2 << 20) - 1] = std::byte{7};
  EXPECT_EQ(pool.peak_bytes(), std::size_t{2} << 20);
}

// A block that cannot grow (no memory left: pinned memory runs out long before address
// space) is not left lent: it would never be fenced, and the next acquire() over the budget
// would wait for it forever.
TEST(StagingPool, ABlockThatCannotGrowIsNotLeftLent) {
#if defined(STREAMPIPE_TEST_SANITIZED)
  GTEST_SKIP() << "the sanitizers' allocators end the process on an impossible allocation";
#else
  FakeLanes lanes;
  StagingPool pool(false, 2000, 4, lanes.waiter());
  // Nothing is lent, so the lease is granted whatever its size; growing the block fails.
  EXPECT_THROW((void)pool.acquire(std::size_t{1} << 62, 0), std::bad_alloc);
  EXPECT_THROW((void)pool.acquire_now(std::size_t{1} << 62, 1), std::bad_alloc);
  EXPECT_EQ(pool.peak_bytes(), 0u);  // nothing was lent
  testing::finishes_within("acquire() after failed ones", [&] {
    auto a = pool.acquire(1500, 2);  // within the budget once the failed ones came back
    ASSERT_TRUE(a.has_value());
    a->data[1499] = std::byte{1};
  });
#endif
}

TEST(StagingPool, AcquireNowNeverWaitsButCounts) {
  FakeLanes lanes;
  StagingPool pool(false, 1500, 4, lanes.waiter());
  auto a = pool.acquire_now(1000, 0);
  auto b = pool.acquire_now(1000, 1);  // over the budget: produce stages are not held back
  EXPECT_NE(a.data, b.data);
  EXPECT_EQ(pool.peak_bytes(), 2000u);
  pool.fence(a);
  // 2000 + 400 lent would be over: taking back a's block brings it to 1400.
  auto waiting = std::async(std::launch::async, [&] { return pool.acquire(400, 2); });
  ASSERT_TRUE(lanes.waited_for(0));
  lanes.finish_inputs(0);
  EXPECT_TRUE(waiting.get().has_value());
}

TEST(StagingPool, StopWakesWaitersAndRefusesLaterRequests) {
  FakeLanes lanes;
  StagingPool pool(false, 1000, 2, lanes.waiter());
  auto a = pool.acquire(1000, 0);
  ASSERT_TRUE(a.has_value());
  auto waiting = std::async(std::launch::async, [&] { return pool.acquire(1000, 1); });
  EXPECT_EQ(waiting.wait_for(50ms), std::future_status::timeout);
  pool.stop();
  EXPECT_FALSE(waiting.get().has_value());
  EXPECT_FALSE(pool.acquire(1, 1).has_value());
}

TEST(StagingPool, ReleaseWhileAnotherWaitsForTheSameBlockCountsItOnce) {
  FakeLanes lanes;
  StagingPool pool(false, 1000, 4, lanes.waiter());
  auto a = pool.acquire(1000, 0);
  ASSERT_TRUE(a.has_value());
  pool.fence(*a);
  auto waiting = std::async(std::launch::async, [&] { return pool.acquire(1000, 1); });
  ASSERT_TRUE(lanes.waited_for(0));
  pool.release(*a);  // slot 0 completed first and gave the block back
  auto c = pool.acquire(1000, 2);  // ... and someone else took it
  ASSERT_TRUE(c.has_value());
  lanes.finish_inputs(0);
  // The waiter must not take slot 2's block: it waits until slot 2's lease goes back.
  EXPECT_EQ(waiting.wait_for(50ms), std::future_status::timeout);
  pool.release(*c);
  ASSERT_TRUE(waiting.get().has_value());
  EXPECT_EQ(pool.peak_bytes(), 1000u);
}

TEST(StagingPool, AFailingWaitIsRethrownAndTheBlockStaysLent) {
  StagingPool pool(false, 1000, 2, [](int) { throw std::runtime_error("device lost"); });
  auto a = pool.acquire(1000, 0);
  ASSERT_TRUE(a.has_value());
  pool.fence(*a);
  EXPECT_THROW((void)pool.acquire(1000, 1), std::runtime_error);
  pool.release(*a);
  EXPECT_TRUE(pool.acquire(1000, 1).has_value());
}

TEST(StagingPool, MostRecentlyReturnedBlockIsLentFirst) {
  FakeLanes lanes;
  StagingPool pool(false, 10000, 4, lanes.waiter());
  const auto [a, b] = lend_two(pool);
  pool.release(a);
  pool.release(b);
  EXPECT_EQ(pool.acquire(1000, 2)->data, b.data);  // likeliest still in the cache
  EXPECT_EQ(pool.acquire(1000, 3)->data, a.data);
}

TEST(StagingPool, BudgetZeroKeepsEverySlotsOwnBlock) {
  StagingPool pool(false, 0, 3, [](int) { FAIL() << "budget 0 never waits"; });
  std::vector<std::byte*> first;
  for (int slot = 0; slot < 3; ++slot) {
    auto lease = pool.acquire(4096, slot);
    ASSERT_TRUE(lease.has_value());
    first.push_back(lease->data);
    pool.fence(*lease);
    pool.release(*lease);
  }
  for (int slot = 2; slot >= 0; --slot) {
    auto lease = pool.acquire(4096, slot);
    ASSERT_TRUE(lease.has_value());
    EXPECT_EQ(lease->data, first[static_cast<std::size_t>(slot)]);  // stable for graph replay
    pool.release(*lease);
  }
  auto held = pool.acquire(1, 0);
  ASSERT_TRUE(held.has_value());
  EXPECT_THROW((void)pool.acquire(1, 0), std::logic_error);  // a slot holds one lease at a time
  EXPECT_THROW((void)pool.acquire(1, 3), std::logic_error);  // not a slot of this engine
}

TEST(StagingPool, ManyThreadsNeverHoldMoreThanTheBudget) {
  // Lanes that finish every slot's copies at once, and many submitters: the budget holds.
  StagingPool pool(false, 4 * 256, 16, [](int) {});
  std::atomic<int> ok{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < 200; ++i) {
        const int slot = 2 * t + (i % 2);
        auto lease = pool.acquire(256, slot);
        if (!lease) return;
        lease->data[0] = std::byte{static_cast<unsigned char>(i)};
        pool.fence(*lease);
        if (i % 3 == 0) pool.release(*lease);  // sometimes the completion comes first
        ok.fetch_add(1);
      }
    });
  for (auto& th : threads) th.join();
  EXPECT_EQ(ok.load(), 8 * 200);
  EXPECT_LE(pool.peak_bytes(), 4u * 256);
}

}  // namespace
}  // namespace streampipe::pipeline::detail
