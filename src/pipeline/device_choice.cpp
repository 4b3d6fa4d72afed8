// SPDX-License-Identifier: Apache-2.0
#include "device_choice.hpp"

#include <algorithm>
#include <stdexcept>

namespace streampipe::pipeline::detail {

std::size_t DeviceChoice::add(int slots, State state) {
  if (slots < 1) throw std::invalid_argument("DeviceChoice::add: a device needs a slot");
  Device d;
  d.slots = slots;
  d.state = state;
  devices_.push_back(d);
  return devices_.size() - 1;
}

std::size_t DeviceChoice::alive_count() const noexcept {
  return static_cast<std::size_t>(std::count_if(devices_.begin(), devices_.end(), [](const Device& s) {
    return s.state == State::ready || s.state == State::starting;
  }));
}

void DeviceChoice::started(std::size_t d, double work, std::size_t kind) noexcept {
  ++devices_[d].in_flight;
  ++devices_[d].in_flight_of[kind];
  devices_[d].work_in_flight += work;
}

void DeviceChoice::finished(std::size_t d, double latency_ms, bool ran, double started_work, double work,
                            std::size_t kind) noexcept {
  Device& s = devices_[d];
  if (s.in_flight > 0) --s.in_flight;
  if (s.in_flight_of[kind] > 0) --s.in_flight_of[kind];
  s.work_in_flight = s.in_flight > 0 ? std::max(0.0, s.work_in_flight - started_work) : 0.0;
  if (!ran || latency_ms <= 0 || !(work > 0)) return;
  if (s.runs++ == 0) return;  // the warm-up
  // Weight 1/4: a few batches follow a change of speed (another process on the GPU, a
  // throttled clock), while one odd batch moves the estimate little.
  const double per_unit = latency_ms / work;
  double& estimate = s.latency_ms[kind];
  estimate = estimate > 0 ? 0.75 * estimate + 0.25 * per_unit : per_unit;
}

void DeviceChoice::ready(std::size_t d) noexcept {
  if (devices_[d].state == State::starting) devices_[d].state = State::ready;
}

void DeviceChoice::fail(std::size_t d) noexcept {
  if (devices_[d].state == State::starting) devices_[d].state = State::failed;
}

void DeviceChoice::lose(std::size_t d) noexcept { devices_[d].state = State::lost; }

double DeviceChoice::horizon_ms(double remaining_work, std::size_t kind) const noexcept {
  double rate = 0;  // units of work per ms
  double in_flight = 0;
  for (const Device& s : devices_) {
    if (s.state != State::ready) continue;
    in_flight += s.work_in_flight;
    if (s.latency_ms[kind] > 0) rate += s.slots / s.latency_ms[kind];
  }
  if (rate <= 0) return -1;
  return (in_flight + std::max(0.0, remaining_work)) / rate;
}

double DeviceChoice::fastest_measured(std::size_t kind) const noexcept {
  double fastest = 0;
  for (const Device& s : devices_)
    if (s.state == State::ready && s.latency_ms[kind] > 0 && (fastest == 0 || s.latency_ms[kind] < fastest))
      fastest = s.latency_ms[kind];
  return fastest;
}

}  // namespace streampipe::pipeline::detail
