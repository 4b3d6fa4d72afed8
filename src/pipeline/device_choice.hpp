// SPDX-License-Identifier: Apache-2.0
#pragma once
// Which device of an engine's set takes the next batch. Batches are measured in units of
// work (Item::work: 1 an item unless the producer says otherwise, e.g. the files of a
// group), so that a device measured on small batches is not taken to be as quick on large
// ones, and apart for each kind of work (Item::work_kind), so that a device measured on one
// kind is not taken to be as quick, or as slow, on another (gray's single files, decoded by
// host workers whatever device takes them, against its groups for a GPU's JPEG engines). A
// device of `slots` slots whose batches take L ms per unit from taking a slot to giving it
// back finishes slots / L units per ms; with k units in flight a batch of w more is expected
// to be done (k + w) L / slots from now. Among the devices with a free slot the batch goes
// to the one expected to finish it first, so under backpressure every device works and each
// takes work in proportion to its speed (a device that finishes early frees a slot early and
// takes the next batch).
//
// What would hold the run: when the run's remaining work is known (a horizon: how long the
// set needs to finish everything left and in flight), a device whose batch would take longer
// than that is left out, so a slow device (the CPU beside GPUs) never ends a run after the
// fast ones would have finished it; but only once its speed rests on a few measured batches
// (kRunsBeforeLeftOut): its early ones may still carry set-up made on first use (a lane's
// codec states), and a device left out is never measured again.
//
// A device joins the set when it has started (a GPU's context, pools and the operation's
// set-up), may fail to start, and may be lost for good (a sticky error). Its first batch is
// a warm-up (modules loading, buffers growing) and is not measured. While some device is
// measured, a device that is not yet takes one batch at a time: a slow newcomer costs one
// batch, not a slot's worth; likewise a device on a kind of work it has not run yet, and
// near the end of a run such a device is judged by its slowest kind. Pure: the engine guards
// it with its lock.

#include "streampipe/pipeline/item.hpp"

#include <array>
#include <cstddef>
#include <optional>
#include <vector>

namespace streampipe::pipeline::detail {

class DeviceChoice {
 public:
  enum class State { starting, ready, lost, failed };
  // Batches a device must have run (its warm-up included) before the horizon may leave it out.
  static constexpr std::size_t kRunsBeforeLeftOut = 4;
  // Kinds of work measured apart (Item::work_kind is below this).
  static constexpr std::size_t kKinds = kWorkKinds;

  // A device of `slots` slots (>= 1) joins the set in `state`; returns its position.
  std::size_t add(int slots, State state);
  [[nodiscard]] std::size_t size() const noexcept { return devices_.size(); }
  [[nodiscard]] State state(std::size_t d) const noexcept { return devices_[d].state; }
  // Devices ready or still starting: those that may yet run work.
  [[nodiscard]] std::size_t alive_count() const noexcept;
  [[nodiscard]] std::size_t in_flight(std::size_t d) const noexcept { return devices_[d].in_flight; }
  // Measured milliseconds from taking a slot to giving it back, per unit of work of `kind`;
  // 0 before any.
  [[nodiscard]] double latency_ms(std::size_t d, std::size_t kind = 0) const noexcept {
    return devices_[d].latency_ms[kind];
  }
  // Its latency on the slowest kind it has measured; 0 before any.
  [[nodiscard]] double slowest_latency_ms(std::size_t d) const noexcept { return devices_[d].slowest_measured(); }

  // The ready device with a free slot (`has_free_slot(d)`) expected to finish one more
  // batch of `work` units first, among those `allowed(d)` admits (an item in GPU memory:
  // the GPUs); nullopt when none qualifies: wait for a slot to be given back.
  // `remaining_work`: units the run will still submit after this batch, when known (it sets
  // the horizon, at the rates measured on the batch's `kind`, < kKinds). Ties go to the
  // lowest position.
  template <typename HasFreeSlot, typename Allowed>
  [[nodiscard]] std::optional<std::size_t> choose(HasFreeSlot has_free_slot, Allowed allowed,
                                                  std::optional<double> remaining_work = std::nullopt,
                                                  double work = 1.0, std::size_t kind = 0) const {
    const double fastest = fastest_measured(kind);
    const double horizon = remaining_work ? horizon_ms(*remaining_work, kind) : -1;
    // Only a device slower than the fastest one allowed is ever left out: the work goes on.
    double fastest_allowed = 0;
    for (std::size_t d = 0; d < devices_.size(); ++d) {
      const Device& s = devices_[d];
      if (s.state == State::ready && allowed(d) && s.latency_ms[kind] > 0 &&
          (fastest_allowed == 0 || s.latency_ms[kind] < fastest_allowed))
        fastest_allowed = s.latency_ms[kind];
    }
    std::optional<std::size_t> best;
    double best_finish = 0;
    for (std::size_t d = 0; d < devices_.size(); ++d) {
      const Device& s = devices_[d];
      if (s.state != State::ready || !allowed(d) || !has_free_slot(d)) continue;
      const double own = s.latency_ms[kind];
      const bool measured = own > 0;
      // One batch of a kind at a time until measured on it: a newcomer while others are
      // measured, and a device measured on other kinds only (a batch of a new kind can take
      // much longer, or much less, than its others).
      if (!measured && s.in_flight_of[kind] > 0 && (fastest > 0 || s.slowest_measured() > 0)) continue;
      // For the horizon a kind the device has not run yet is judged by its slowest one, and
      // only beside a device measured on it: a first try must not end the run late.
      const double judged = measured ? own : (fastest_allowed > 0 ? s.slowest_measured() : 0);
      if (judged > 0 && s.runs >= kRunsBeforeLeftOut && horizon >= 0 && work * judged > horizon &&
          judged > fastest_allowed)
        continue;  // it would hold the run
      const double latency = measured ? own : (fastest > 0 ? fastest : 1.0);
      const double finish = (s.work_in_flight + work) * latency / s.slots;
      if (!best || finish < best_finish) {
        best = d;
        best_finish = finish;
      }
    }
    return best;
  }
  template <typename HasFreeSlot>
  [[nodiscard]] std::optional<std::size_t> choose(HasFreeSlot has_free_slot) const {
    return choose(has_free_slot, [](std::size_t) { return true; });
  }

  // How long the set needs to finish what it has in flight and `remaining_work` units more,
  // at its ready devices' rates measured on `kind` (sum of slots / L); -1 before any is.
  [[nodiscard]] double horizon_ms(double remaining_work, std::size_t kind = 0) const noexcept;

  // A batch of `work` units of `kind` (as choose() was told) was handed to device d.
  void started(std::size_t d, double work = 1.0, std::size_t kind = 0) noexcept;
  // A batch of `kind` handed to d came back after `latency_ms`: `started_work` is what
  // started() was told, `work` what the batch turned out to hold. Only one that ran on the
  // device (`ran`) counts, and a device's first does not (its warm-up).
  void finished(std::size_t d, double latency_ms, bool ran, double started_work = 1.0, double work = 1.0,
                std::size_t kind = 0) noexcept;
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
    std::array<std::size_t, kKinds> in_flight_of{};  // batches in flight by kind
    double work_in_flight = 0;
    std::size_t runs = 0;     // batches that ran on it, the warm-up included
    // Per unit of work of each kind, exponentially weighted: recent batches count most.
    std::array<double, kKinds> latency_ms{};
    [[nodiscard]] double slowest_measured() const noexcept {  // 0: nothing measured
      double slowest = 0;
      for (const double l : latency_ms) slowest = l > slowest ? l : slowest;
      return slowest;
    }
  };
  [[nodiscard]] double fastest_measured(std::size_t kind) const noexcept;  // 0: nothing measured

  std::vector<Device> devices_;
};

}  // namespace streampipe::pipeline::detail
