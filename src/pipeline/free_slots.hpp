// SPDX-License-Identifier: Apache-2.0
#pragma once
// The engine's free slots: a queue per member of its device set, and the choice of the
// member that takes the next batch (DeviceChoice). Pure: the engine guards it with its lock.

#include "device_choice.hpp"
#include "slot.hpp"

#include <cstddef>
#include <deque>
#include <optional>
#include <span>
#include <vector>

namespace streampipe::pipeline::detail {

class FreeSlots {
 public:
  // A member of `slots` slots at the next position (returned), starting or ready; `gpu`:
  // a real GPU, which may take items in GPU memory.
  std::size_t add_member(int slots, DeviceChoice::State state, bool gpu);
  // The member's slots, all free: it has started and takes work from now on.
  void join(std::size_t member, std::span<const std::unique_ptr<Slot>> slots);
  // The member could not start; returns how many members are left alive (ready or starting).
  std::size_t fail(std::size_t member) noexcept;
  // The member leaves the set for good; returns how many are left alive.
  std::size_t lose(std::size_t member) noexcept;

  // A slot of the member expected to finish a batch of `work` units of `kind` first, now its
  // own (started at `now_ms`); nullptr when none has room. `gpu_only`: among the GPUs.
  // `remaining_work`: what the run will still submit, when known (DeviceChoice::choose).
  [[nodiscard]] Slot* take(double now_ms, bool gpu_only = false, std::optional<double> remaining_work = std::nullopt,
                           double work = 1.0, std::size_t kind = 0);
  // Whether take() with the same arguments would return a slot now.
  [[nodiscard]] bool any(bool gpu_only = false, std::optional<double> remaining_work = std::nullopt,
                         double work = 1.0, std::size_t kind = 0) const;
  // A slot taken and never used: first in line again, and not counted as work done.
  void put_back_unused(Slot& slot);
  // A slot whose batch of `work` units ended at `now_ms`: its time counts toward its
  // member's speed on the kind it was taken for, when the batch ran there.
  void give_back(Slot& slot, double now_ms, bool ran, double work = 1.0);

  [[nodiscard]] const DeviceChoice& choice() const noexcept { return choice_; }

 private:
  std::vector<std::deque<Slot*>> queues_;
  std::vector<bool> gpu_;
  DeviceChoice choice_;
};

}  // namespace streampipe::pipeline::detail
