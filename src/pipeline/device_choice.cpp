// SPDX-License-Identifier: Apache-2.0
#include "device_choice.hpp"

#include <algorithm>

namespace streampipe::pipeline::detail {

std::size_t DeviceChoice::alive_count() const noexcept {
  return static_cast<std::size_t>(std::count_if(devices_.begin(), devices_.end(), [](const State& s) { return s.alive; }));
}

void DeviceChoice::finished(std::size_t d, double busy_ms, int concurrent, bool ran) noexcept {
  State& s = devices_[d];
  if (s.in_flight > 0) --s.in_flight;
  if (!ran || busy_ms <= 0 || concurrent < 1) return;
  // A batch that shared the device with concurrent - 1 others used a share of it.
  const double sample = busy_ms / static_cast<double>(concurrent);
  // Weight 1/4: a few batches follow a change of speed (another process on the GPU, a
  // throttled clock), while one odd batch moves the estimate little.
  s.ms_per_batch = s.ms_per_batch > 0 ? 0.75 * s.ms_per_batch + 0.25 * sample : sample;
}

double DeviceChoice::fastest_measured() const noexcept {
  double fastest = 0;
  for (const State& s : devices_)
    if (s.alive && s.ms_per_batch > 0 && (fastest == 0 || s.ms_per_batch < fastest)) fastest = s.ms_per_batch;
  return fastest > 0 ? fastest : 1.0;  // nothing measured yet: spread by items in flight alone
}

}  // namespace streampipe::pipeline::detail
