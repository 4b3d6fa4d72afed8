// SPDX-License-Identifier: Apache-2.0
#pragma once
// Which device of an engine's set takes the next batch: the one expected to finish it first.
// A device of `slots` slots whose batches take L ms from taking a slot to giving it back
// finishes one more batch after L while it has a free slot, and after L + L / slots once
// full (it frees a slot every L / slots on average). The batch goes to the device with the
// earliest expected finish; if that device is full the batch waits for it, even while a
// slower device has room: so a slow device (the CPU beside GPUs) takes only the work it
// finishes sooner than the fast one would, and never holds the run.
//
// A device joins the set when it has started (a GPU's context, pools and the operation's
// set-up), may fail to start, and may be lost for good (a sticky error). Its first batch is
// a warm-up (modules loading, buffers growing) and is not measured. While some device is
// measured, a device that is not yet takes one batch at a time: a slow newcomer costs one
// batch, not a slot's worth. Before anything is measured, batches spread over the free
// slots. Pure: the engine guards it with its lock.

#include <cstddef>
#include <optional>
#include <vector>

namespace streampipe::pipeline::detail {

class DeviceChoice {
 public:
  enum class State { starting, ready, lost, failed };

  // A device of `slots` slots (>= 1) joins the set in `state`; returns its position.
  std::size_t add(int slots, State state);
  [[nodiscard]] std::size_t size() const noexcept { return devices_.size(); }
  [[nodiscard]] State state(std::size_t d) const noexcept { return devices_[d].state; }
  // Devices ready or still starting: those that may yet run work.
  [[nodiscard]] std::size_t alive_count() const noexcept;
  [[nodiscard]] std::size_t in_flight(std::size_t d) const noexcept { return devices_[d].in_flight; }
  // Measured milliseconds from taking a slot to giving it back; 0 before any.
  [[nodiscard]] double latency_ms(std::size_t d) const noexcept { return devices_[d].latency_ms; }

  // The ready device expected to finish one more batch first, when it has a free slot
  // (`has_free_slot(d)`); nullopt when that device is full or none is ready: wait for a
  // slot to be given back. Among equal finishes the least occupied device (its share of
  // slots in flight) wins, then the lowest position.
  template <typename HasFreeSlot>
  [[nodiscard]] std::optional<std::size_t> choose(HasFreeSlot has_free_slot) const {
    return choose(has_free_slot, [](std::size_t) { return true; });
  }
  // The same among the devices `allowed(d)` admits (an item in GPU memory: the GPUs).
  template <typename HasFreeSlot, typename Allowed>
  [[nodiscard]] std::optional<std::size_t> choose(HasFreeSlot has_free_slot, Allowed allowed) const {
    const double fastest = fastest_measured();
    std::optional<std::size_t> best;
    double best_finish = 0;
    bool best_free = false;
    for (std::size_t d = 0; d < devices_.size(); ++d) {
      const Device& s = devices_[d];
      if (s.state != State::ready || !allowed(d)) continue;
      const bool measured = s.latency_ms > 0;
      if (!measured && fastest > 0 && s.in_flight > 0) continue;  // one batch at a time until measured
      const bool free = has_free_slot(d);
      const double finish = expected_finish(s, measured ? s.latency_ms : (fastest > 0 ? fastest : 1.0), free);
      if (!best || finish < best_finish ||
          (finish == best_finish && occupancy(s) < occupancy(devices_[*best]))) {
        best = d;
        best_finish = finish;
        best_free = free;
      }
    }
    if (!best || !best_free) return std::nullopt;
    return best;
  }

  // A batch was handed to device d.
  void started(std::size_t d) noexcept { ++devices_[d].in_flight; }
  // A batch handed to d came back after `latency_ms`; only one that ran on the device
  // (`ran`) counts, and a device's first does not (its warm-up).
  void finished(std::size_t d, double latency_ms, bool ran) noexcept;
  // Device d has started and may take work.
  void ready(std::size_t d) noexcept;
  // Device d could not start, or was lost: choose() never returns it again.
  void fail(std::size_t d) noexcept;
  void lose(std::size_t d) noexcept;

 private:
  struct Device {
    State state = State::starting;
    int slots = 1;
    std::size_t in_flight = 0;
    std::size_t runs = 0;     // batches that ran on it, the warm-up included
    double latency_ms = 0;    // exponentially weighted: recent batches count most
  };
  // Full: waits for the next slot, which frees every latency / slots on average.
  [[nodiscard]] static double expected_finish(const Device& s, double latency_ms, bool free) noexcept {
    return free ? latency_ms : latency_ms * (1.0 + 1.0 / s.slots);
  }
  [[nodiscard]] static double occupancy(const Device& s) noexcept {
    return static_cast<double>(s.in_flight) / s.slots;
  }
  [[nodiscard]] double fastest_measured() const noexcept;  // 0: nothing measured

  std::vector<Device> devices_;
};

}  // namespace streampipe::pipeline::detail
