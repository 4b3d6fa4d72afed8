// SPDX-License-Identifier: Apache-2.0
// The queue under the engine's workers and completion threads: order, every value handed out
// once across consumers, close() draining what was pushed, and `before` ordered with pushes.

#include "closable_queue.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <stdexcept>
#include <thread>
#include <vector>

namespace streampipe::pipeline::detail {
namespace {

TEST(ClosableQueue, HandsOutInOrderAndDrainsAfterClose) {
  ClosableQueue<int> q;
  for (int i = 0; i < 5; ++i) q.push(i);
  q.close();
  q.push(5);  // after close: still handed out
  for (int i = 0; i < 6; ++i) {
    const auto v = q.pop();
    ASSERT_TRUE(v.has_value());
    EXPECT_EQ(*v, i);
  }
  EXPECT_FALSE(q.pop().has_value());
  EXPECT_FALSE(q.pop().has_value());  // stays closed
}

TEST(ClosableQueue, CloseWakesEveryWaitingConsumer) {
  ClosableQueue<int> q;
  std::atomic<int> finished{0};
  std::vector<std::thread> consumers;
  for (int i = 0; i < 4; ++i)
    consumers.emplace_back([&] {
      while (q.pop()) {}
      ++finished;
    });
  q.close();
  for (auto& t : consumers) t.join();
  EXPECT_EQ(finished.load(), 4);
}

TEST(ClosableQueue, EveryValueReachesExactlyOneConsumer) {
  ClosableQueue<int> q;
  constexpr int kValues = 20000, kConsumers = 4;
  std::vector<std::atomic<int>> seen(kValues);
  std::vector<std::thread> consumers;
  for (int c = 0; c < kConsumers; ++c)
    consumers.emplace_back([&] {
      while (const auto v = q.pop()) ++seen[static_cast<std::size_t>(*v)];
    });
  std::thread producer([&] {
    for (int i = 0; i < kValues; ++i) q.push(i);
    q.close();
  });
  producer.join();
  for (auto& t : consumers) t.join();
  for (int i = 0; i < kValues; ++i) ASSERT_EQ(seen[static_cast<std::size_t>(i)].load(), 1) << i;
}

TEST(ClosableQueue, BeforeRunsInPushOrderAndAThrowPushesNothing) {
  ClosableQueue<int> q;
  std::vector<int> order;  // written only under the queue's lock, by `before`
  std::vector<std::thread> producers;
  for (int p = 0; p < 4; ++p)
    producers.emplace_back([&, p] {
      for (int i = 0; i < 500; ++i) {
        const int value = p * 1000 + i;
        q.push(value, [&] { order.push_back(value); });
      }
    });
  for (auto& t : producers) t.join();
  EXPECT_THROW(q.push(-1, [] { throw std::runtime_error("refused"); }), std::runtime_error);
  q.close();
  std::vector<int> popped;
  while (const auto v = q.pop()) popped.push_back(*v);
  EXPECT_EQ(popped, order);  // the queue's order is the order `before` ran in
}

}  // namespace
}  // namespace streampipe::pipeline::detail
