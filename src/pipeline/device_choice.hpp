// SPDX-License-Identifier: Apache-2.0
#pragma once
// Which device of an engine's set takes the next batch: the one expected to finish it
// first, from what each device has in flight and how fast it has been finishing work. Each
// device has its own free slots (its queue); a device that finishes early frees its slots
// early and so takes ("steals") the work a slower one would have queued, without any
// round-robin share. A device that hit a sticky error is out of the set for good. Pure: the
// engine guards it with its lock.

#include <cstddef>
#include <optional>
#include <vector>

namespace streampipe::pipeline::detail {

class DeviceChoice {
 public:
  explicit DeviceChoice(std::size_t devices) : devices_(devices) {}

  [[nodiscard]] std::size_t size() const noexcept { return devices_.size(); }
  [[nodiscard]] bool alive(std::size_t d) const noexcept { return devices_[d].alive; }
  [[nodiscard]] std::size_t alive_count() const noexcept;
  // Batches handed to device d and not back yet.
  [[nodiscard]] std::size_t in_flight(std::size_t d) const noexcept { return devices_[d].in_flight; }
  // Measured milliseconds per batch on the device: the time its batches took from start to
  // completion, shared among the batches it runs at once; 0 before any.
  [[nodiscard]] double ms_per_batch(std::size_t d) const noexcept { return devices_[d].ms_per_batch; }

  // Among devices that are alive and for which `has_free_slot(d)` holds, the one expected
  // to finish one more batch first: (batches in flight + 1) x its time per batch. A device not measured yet counts as fast as the fastest measured one, so
  // that every device is tried. Ties go to the lowest index. nullopt when none qualifies.
  template <typename HasFreeSlot>
  [[nodiscard]] std::optional<std::size_t> choose(HasFreeSlot has_free_slot) const {
    std::optional<std::size_t> best;
    double best_cost = 0;
    const double unmeasured = fastest_measured();
    for (std::size_t d = 0; d < devices_.size(); ++d) {
      if (!devices_[d].alive || !has_free_slot(d)) continue;
      const double per_batch = devices_[d].ms_per_batch > 0 ? devices_[d].ms_per_batch : unmeasured;
      const double cost = static_cast<double>(devices_[d].in_flight + 1) * per_batch;
      if (!best || cost < best_cost) {
        best = d;
        best_cost = cost;
      }
    }
    return best;
  }

  // A batch was handed to device d.
  void started(std::size_t d) noexcept { ++devices_[d].in_flight; }
  // A batch handed to d came back; `busy_ms` is how long it took from its start to its
  // completion, and `concurrent` how many batches the device runs at once. Only a batch
  // that ran on the device (ran = true) updates the measurement.
  void finished(std::size_t d, double busy_ms, int concurrent, bool ran) noexcept;
  // Device d is out of the set: choose() never returns it again.
  void lose(std::size_t d) noexcept { devices_[d].alive = false; }

 private:
  struct State {
    bool alive = true;
    std::size_t in_flight = 0;
    double ms_per_batch = 0;  // exponentially weighted: recent batches count most
  };
  [[nodiscard]] double fastest_measured() const noexcept;

  std::vector<State> devices_;
};

}  // namespace streampipe::pipeline::detail
