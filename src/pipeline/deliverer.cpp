// SPDX-License-Identifier: Apache-2.0
#include "deliverer.hpp"

#include "engine_thread.hpp"

#include <utility>

namespace streampipe::pipeline::detail {

Deliverer::Deliverer(Delivery order, const std::function<void(const ItemResult&)>& on_complete,
                     std::function<void(ItemStatus)> handed)
    : in_order_(order == Delivery::in_order), on_complete_(on_complete), handed_(std::move(handed)) {}

void Deliverer::deliver(std::unique_ptr<ItemState> st) noexcept {
  if (!in_order_) {
    hand_over(*st);
    return;
  }
  std::unique_lock lock(order_mutex_);
  try {
    held_.push(st->index, std::move(st));
  } catch (...) {
    // push() left `st` as it was: losing it would leave its future and drain() waiting.
    lock.unlock();
    hand_over(*st);
    return;
  }
  if (handing_) return;  // that thread hands this one over too, when its turn comes
  handing_ = true;
  for (;;) {
    auto next = held_.pop();
    if (!next) break;
    lock.unlock();
    hand_over(**next);
    next.reset();  // the item's stages may own anything: not destroyed under the lock
    lock.lock();
  }
  handing_ = false;
}

std::exception_ptr Deliverer::take_callback_error() {
  std::lock_guard lock(error_mutex_);
  return std::exchange(callback_error_, nullptr);
}

void Deliverer::hand_over(ItemState& st) noexcept {
  if (on_complete_) {
    // The callback may not wait on this engine: the item it is given is not handed over yet.
    const EngineThreadMark mark(this);
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
