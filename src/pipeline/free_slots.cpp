// SPDX-License-Identifier: Apache-2.0
#include "free_slots.hpp"

namespace streampipe::pipeline::detail {

Slot* FreeSlots::take(double now_ms) {
  const auto member = choice_.choose([&](std::size_t d) { return !queues_[d].empty(); });
  if (!member) return nullptr;
  Slot* slot = queues_[*member].front();
  queues_[*member].pop_front();
  choice_.started(*member);
  slot->acquired_ms = now_ms;
  return slot;
}

bool FreeSlots::any() const {
  return choice_.choose([&](std::size_t d) { return !queues_[d].empty(); }).has_value();
}

void FreeSlots::put_back_unused(Slot& slot) {
  choice_.finished(slot.member, 0, 1, false);
  queues_[slot.member].push_front(&slot);
}

void FreeSlots::give_back(Slot& slot, double now_ms, bool ran) {
  choice_.finished(slot.member, now_ms - slot.acquired_ms, per_device_, ran);
  queues_[slot.member].push_back(&slot);
}

std::size_t FreeSlots::lose(std::size_t member) noexcept {
  choice_.lose(member);
  return choice_.alive_count();
}

}  // namespace streampipe::pipeline::detail
