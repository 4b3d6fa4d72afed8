// SPDX-License-Identifier: Apache-2.0
#include "free_slots.hpp"

namespace streampipe::pipeline::detail {

std::size_t FreeSlots::add_member(int slots, DeviceChoice::State state, bool gpu) {
  queues_.emplace_back();
  gpu_.push_back(gpu);
  return choice_.add(slots, state);
}

void FreeSlots::join(std::size_t member, std::span<const std::unique_ptr<Slot>> slots) {
  for (const auto& s : slots) queues_[member].push_back(s.get());
  choice_.ready(member);
}

std::size_t FreeSlots::fail(std::size_t member) noexcept {
  choice_.fail(member);
  return choice_.alive_count();
}

std::size_t FreeSlots::lose(std::size_t member) noexcept {
  choice_.lose(member);
  return choice_.alive_count();
}

Slot* FreeSlots::take(double now_ms, bool gpu_only, std::optional<double> remaining_work, double work,
                      std::size_t kind) {
  const auto member = choice_.choose([&](std::size_t d) { return !queues_[d].empty(); },
                                     [&](std::size_t d) { return !gpu_only || gpu_[d]; }, remaining_work, work, kind);
  if (!member) return nullptr;
  Slot* slot = queues_[*member].front();
  queues_[*member].pop_front();
  choice_.started(*member, work, kind);
  slot->acquired_ms = now_ms;
  slot->taken_work = work;
  slot->taken_kind = kind;
  return slot;
}

bool FreeSlots::any(bool gpu_only, std::optional<double> remaining_work, double work, std::size_t kind) const {
  return choice_
      .choose([&](std::size_t d) { return !queues_[d].empty(); },
              [&](std::size_t d) { return !gpu_only || gpu_[d]; }, remaining_work, work, kind)
      .has_value();
}

void FreeSlots::put_back_unused(Slot& slot) {
  choice_.finished(slot.member, 0, false, slot.taken_work, slot.taken_work, slot.taken_kind);
  queues_[slot.member].push_front(&slot);
}

void FreeSlots::give_back(Slot& slot, double now_ms, bool ran, double work) {
  choice_.finished(slot.member, now_ms - slot.acquired_ms, ran, slot.taken_work, work, slot.taken_kind);
  queues_[slot.member].push_back(&slot);
}

}  // namespace streampipe::pipeline::detail
