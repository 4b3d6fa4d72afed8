// SPDX-License-Identifier: Apache-2.0
#pragma once
// Hands finished items to their caller: the on_complete callback, then the future. In
// submission order when asked: a reorder buffer holds an item until every earlier one has
// gone, and one thread at a time hands the ready ones over, so the callbacks run in order
// and one at a time. No lock is held while a callback runs: a callback may submit more
// work, and an item that submission ends at once (the engine was cancelled or failed)
// comes back into deliver() on the same thread; it is then queued for the loop already
// handing over, instead of waiting for a lock that thread holds. A callback's exception
// never reaches the thread that delivered: the first one is kept for drain() to rethrow.
// While a callback runs, its thread is marked as this deliverer's (engine_thread.hpp): the
// engine then refuses the waits that would wait for that thread.

#include "reorder_buffer.hpp"
#include "slot.hpp"

#include "streampipe/pipeline/engine.hpp"

#include <exception>
#include <functional>
#include <memory>
#include <mutex>

namespace streampipe::pipeline::detail {

class Deliverer {
 public:
  // `on_complete` (may be empty) must outlive the deliverer. `handed` runs after each
  // item's future was set, with the item's status; it must not throw.
  Deliverer(Delivery order, const std::function<void(const ItemResult&)>& on_complete,
            std::function<void(ItemStatus)> handed);

  // Hands `st` over now, or once every earlier index has been (possibly on another thread,
  // the one handing over at the time). Each index must come once. Never loses an item: one
  // the reorder buffer cannot hold (an index repeated, or no memory to hold it) is handed
  // over at once, out of order.
  void deliver(std::unique_ptr<ItemState> st) noexcept;
  // The first exception a callback threw since the last call, or null.
  [[nodiscard]] std::exception_ptr take_callback_error();

 private:
  void hand_over(ItemState& st) noexcept;

  bool in_order_;
  const std::function<void(const ItemResult&)>& on_complete_;
  std::function<void(ItemStatus)> handed_;
  std::mutex order_mutex_;  // guards held_ and handing_
  ReorderBuffer<std::unique_ptr<ItemState>> held_;
  bool handing_ = false;    // a thread is handing items over; others only queue theirs
  std::mutex error_mutex_;
  std::exception_ptr callback_error_;
};

}  // namespace streampipe::pipeline::detail
