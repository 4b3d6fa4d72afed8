// SPDX-License-Identifier: Apache-2.0
// The hand-over of finished items: the callback runs before the future is set and the
// engine is told after; in-order delivery holds an item until every earlier one has gone;
// a callback's exception is kept (the first one) and the item is still delivered.

#include "bounded.hpp"
#include "deliverer.hpp"
#include "item_validation.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <future>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace streampipe::pipeline::detail {
namespace {

using namespace std::chrono_literals;

struct Delivered {
  std::unique_ptr<ItemState> state;
  std::future<ItemResult> future;
};

Delivered make(std::size_t index, ItemStatus status = ItemStatus::done) {
  auto st = std::make_unique<ItemState>();
  st->index = index;
  st->result.index = index;
  st->result.status = status;
  auto future = st->promise.get_future();
  return {std::move(st), std::move(future)};
}

TEST(Deliverer, InOrderHoldsItemsUntilTheGapCloses) {
  std::vector<std::size_t> called;
  std::vector<ItemStatus> handed;
  std::vector<bool> ready_when_called;
  std::vector<Delivered> items;
  for (std::size_t i = 0; i < 4; ++i) items.push_back(make(i, i == 2 ? ItemStatus::failed : ItemStatus::done));
  const std::function<void(const ItemResult&)> on_complete = [&](const ItemResult& r) {
    called.push_back(r.index);
    ready_when_called.push_back(items[r.index].future.wait_for(0s) == std::future_status::ready);
  };
  Deliverer deliverer(Delivery::in_order, on_complete, [&](ItemStatus s) { handed.push_back(s); });

  deliverer.deliver(std::move(items[3].state));
  deliverer.deliver(std::move(items[1].state));
  EXPECT_TRUE(called.empty());
  EXPECT_EQ(items[1].future.wait_for(0s), std::future_status::timeout);
  deliverer.deliver(std::move(items[0].state));
  EXPECT_EQ(called, (std::vector<std::size_t>{0, 1}));
  deliverer.deliver(std::move(items[2].state));
  EXPECT_EQ(called, (std::vector<std::size_t>{0, 1, 2, 3}));
  EXPECT_EQ(ready_when_called, (std::vector<bool>{false, false, false, false}));  // callback first
  const std::vector<ItemStatus> statuses{ItemStatus::done, ItemStatus::done, ItemStatus::failed, ItemStatus::done};
  EXPECT_EQ(handed, statuses);
  for (std::size_t i = 0; i < 4; ++i) EXPECT_EQ(items[i].future.get().index, i);
  EXPECT_FALSE(deliverer.take_callback_error());
}

TEST(Deliverer, AsCompletedHandsOverAtOnce) {
  std::vector<std::size_t> called;
  const std::function<void(const ItemResult&)> on_complete = [&](const ItemResult& r) { called.push_back(r.index); };
  int handed = 0;
  Deliverer deliverer(Delivery::as_completed, on_complete, [&](ItemStatus) { ++handed; });
  auto late = make(5);
  auto early = make(0);
  deliverer.deliver(std::move(late.state));
  EXPECT_EQ(late.future.wait_for(0s), std::future_status::ready);
  deliverer.deliver(std::move(early.state));
  EXPECT_EQ(called, (std::vector<std::size_t>{5, 0}));
  EXPECT_EQ(handed, 2);
}

TEST(Deliverer, KeepsTheFirstCallbackExceptionAndStillDelivers) {
  const std::function<void(const ItemResult&)> on_complete = [](const ItemResult& r) {
    throw std::runtime_error("callback " + std::to_string(r.index));
  };
  int handed = 0;
  Deliverer deliverer(Delivery::in_order, on_complete, [&](ItemStatus) { ++handed; });
  auto a = make(0);
  auto b = make(1);
  deliverer.deliver(std::move(a.state));
  deliverer.deliver(std::move(b.state));
  EXPECT_EQ(handed, 2);
  EXPECT_TRUE(a.future.get().ok());
  EXPECT_TRUE(b.future.get().ok());
  const auto error = deliverer.take_callback_error();
  ASSERT_TRUE(error);
  EXPECT_EQ(describe_exception(error), "callback 0");
  EXPECT_FALSE(deliverer.take_callback_error());
}

// A callback may deliver again on its own thread (a submit after cancel() ends its item at
// once): the nested item is queued for the loop already handing over, after the callback
// returns, in order. Delivery used to hold its lock around callbacks: this deadlocked.
TEST(Deliverer, ACallbackMayDeliverAgainOnItsOwnThread) {
  std::vector<Delivered> items;
  for (std::size_t i = 0; i < 3; ++i) items.push_back(make(i));
  std::vector<std::string> events;
  Deliverer* self = nullptr;
  const std::function<void(const ItemResult&)> on_complete = [&](const ItemResult& r) {
    events.push_back("begin " + std::to_string(r.index));
    if (r.index == 0) self->deliver(std::move(items[2].state));  // ahead of 1: held
    if (r.index == 1) {
      EXPECT_EQ(items[2].future.wait_for(0s), std::future_status::timeout);
    }
    events.push_back("end " + std::to_string(r.index));
  };
  int handed = 0;
  Deliverer deliverer(Delivery::in_order, on_complete, [&](ItemStatus) { ++handed; });
  self = &deliverer;
  deliverer.deliver(std::move(items[1].state));
  testing::finishes_within("a delivery whose callback delivers again",
                           [&] { deliverer.deliver(std::move(items[0].state)); });
  EXPECT_EQ(events, (std::vector<std::string>{"begin 0", "end 0", "begin 1", "end 1", "begin 2", "end 2"}));
  EXPECT_EQ(handed, 3);
  for (std::size_t i = 0; i < 3; ++i) EXPECT_EQ(items[i].future.get().index, i);
}

TEST(Deliverer, NoCallbackIsFine) {
  const std::function<void(const ItemResult&)> none;
  int handed = 0;
  Deliverer deliverer(Delivery::in_order, none, [&](ItemStatus) { ++handed; });
  auto a = make(0, ItemStatus::cancelled);
  deliverer.deliver(std::move(a.state));
  EXPECT_EQ(a.future.get().status, ItemStatus::cancelled);
  EXPECT_EQ(handed, 1);
}

}  // namespace
}  // namespace streampipe::pipeline::detail
