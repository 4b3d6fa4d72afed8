// SPDX-License-Identifier: Apache-2.0
#pragma once
// The engine's free slots: a queue per device of its set, and the choice of the device that
// takes the next batch (DeviceChoice). Pure: the engine guards it with its lock.

#include "device_choice.hpp"
#include "slot.hpp"

#include <cstddef>
#include <deque>
#include <vector>

namespace streampipe::pipeline::detail {

class FreeSlots {
 public:
  // `per_device`: the slots each device runs at once (its lanes x depth).
  FreeSlots(std::size_t devices, int per_device) : queues_(devices), choice_(devices), per_device_(per_device) {}

  // A slot free from the start, or given back.
  void add(Slot& slot) { queues_[slot.member].push_back(&slot); }
  // A slot of the device expected to finish first among those left with one free, now its
  // own (started at `now_ms`); nullptr when none has one.
  [[nodiscard]] Slot* take(double now_ms);
  // Whether take() would return a slot now.
  [[nodiscard]] bool any() const;
  // A slot taken and never used: first in line again, and not counted as work done.
  void put_back_unused(Slot& slot);
  // A slot whose batch ended at `now_ms`: its time counts toward its device's speed when
  // the batch ran there.
  void give_back(Slot& slot, double now_ms, bool ran);
  // Device `member` leaves the set; returns how many are left.
  std::size_t lose(std::size_t member) noexcept;

 private:
  std::vector<std::deque<Slot*>> queues_;
  DeviceChoice choice_;
  int per_device_;
};

}  // namespace streampipe::pipeline::detail
