// SPDX-License-Identifier: Apache-2.0
#pragma once
// Measures the physical limits every report is held against: pinned H2D and D2H, both
// directions at once, pageable H2D and D2H (plain cudaMemcpy), and device-to-device copy.
// Timed with events after warm-up; each figure is the median (with min and max) of `runs`.

#include "streampipe/cuda/device.hpp"

#include <cstddef>
#include <string>
#include <vector>

namespace streampipe {

struct BandwidthFigure {
  std::string path;     // "pinned_h2d", "pinned_d2h", "bidirectional", "pageable_h2d", ...
  std::string label;    // human-readable
  double median_gbps = 0.0;
  double min_gbps = 0.0;
  double max_gbps = 0.0;
  std::size_t bytes = 0;  // bytes counted per run (both directions, or read + write for D2D)
};

struct BandwidthOptions {
  std::size_t bytes = std::size_t{256} << 20;  // per direction
  int runs = 9;
  int warmup = 2;
  bool pageable = true;  // pageable runs are slow; skip them for quick probes
};

struct LinkLimits {
  int device = 0;
  std::string device_name;
  std::vector<BandwidthFigure> figures;
  // Convenience lookups; 0 when not measured. gbps() is the median run; peak_gbps() the
  // best run, the steadier yardstick on a link that other traffic sometimes slows down.
  [[nodiscard]] double gbps(const std::string& path) const;
  [[nodiscard]] double peak_gbps(const std::string& path) const;
};

// A figure from the times of its runs in ms: the median run's rate, and the fastest and
// slowest runs' rates as max and min (report::summarize, the one median of every report).
[[nodiscard]] BandwidthFigure figure_from_runs(std::string path, std::string label, std::size_t bytes,
                                               const std::vector<double>& ms);

[[nodiscard]] LinkLimits measure_link(const Device& device, const BandwidthOptions& options = {});

// The limits for `device`, measured once per process with a short probe (64 MiB, 5 runs,
// pinned paths only) and cached. Engines and reports use these as their yardstick.
[[nodiscard]] const LinkLimits& link_limits(Device device);

}  // namespace streampipe
