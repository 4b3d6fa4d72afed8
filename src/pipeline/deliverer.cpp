// SPDX-License-Identifier: Apache-2.0
#include "deliverer.hpp"

#include <utility>

namespace streampipe::pipeline::detail {

Deliverer::Deliverer(Delivery order, const std::function<void(const ItemResult&)>& on_complete,
                     std::function<void(ItemStatus)> handed)
    : in_order_(order == Delivery::in_order), on_complete_(on_complete), handed_(std::move(handed)) {}

void Deliverer::deliver(std::unique_ptr<ItemState> st) {
  if (!in_order_) {
    hand_over(*st);
    return;
  }
  std::lock_guard lock(order_mutex_);
  const std::size_t index = st->index;
  held_.push(index, std::move(st));
  while (auto next = held_.pop()) hand_over(**next);
}

std::exception_ptr Deliverer::take_callback_error() {
  std::lock_guard lock(error_mutex_);
  return std::exchange(callback_error_, nullptr);
}

void Deliverer::hand_over(ItemState& st) {
  if (on_complete_) {
    try {
      on_complete_(st.result);
    } catch (...) {
      std::lock_guard lock(error_mutex_);
      if (!callback_error_) callback_error_ = std::current_exception();
    }
  }
  const ItemStatus status = st.result.status;
  st.promise.set_value(std::move(st.result));
  handed_(status);
}

}  // namespace streampipe::pipeline::detail
