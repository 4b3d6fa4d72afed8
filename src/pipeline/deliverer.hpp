// SPDX-License-Identifier: Apache-2.0
#pragma once
// Hands finished items to their caller: the on_complete callback, then the future. In
// submission order when asked: a reorder buffer holds an item until every earlier one has
// gone, and its lock stays held while handing over, so the callbacks run in order too (and
// one at a time). A callback's exception never reaches the thread that delivered: the first
// one is kept for drain() to rethrow.

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
  // item's future was set, with the item's status.
  Deliverer(Delivery order, const std::function<void(const ItemResult&)>& on_complete,
            std::function<void(ItemStatus)> handed);

  // Hands `st` over now, or once every earlier index has been. Each index must come once:
  // in order, a repeated index throws std::logic_error.
  void deliver(std::unique_ptr<ItemState> st);
  // The first exception a callback threw since the last call, or null.
  [[nodiscard]] std::exception_ptr take_callback_error();

 private:
  void hand_over(ItemState& st);

  bool in_order_;
  const std::function<void(const ItemResult&)>& on_complete_;
  std::function<void(ItemStatus)> handed_;
  std::mutex order_mutex_;
  ReorderBuffer<std::unique_ptr<ItemState>> held_;
  std::mutex error_mutex_;
  std::exception_ptr callback_error_;
};

}  // namespace streampipe::pipeline::detail
