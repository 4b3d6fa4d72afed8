// SPDX-License-Identifier: Apache-2.0
#pragma once
// Which GPU's link is far below its peers': a GPU behind a slow PCIe switch, or one whose
// link trained at a lower speed or width, moves data slower than the others of the host
// and holds back whatever is spread evenly over them. Pure arithmetic, apart from the
// measurement (aggregate_bandwidth.hpp) so that it is tested without a GPU.

#include <cstddef>
#include <span>
#include <vector>

namespace streampipe {

struct SlowLink {
  std::size_t index = 0;      // position in the figures given (not a device index)
  double gbps = 0.0;          // its figure
  double peers_median = 0.0;  // the median of every other figure
};

// The entries whose figure is below `threshold` x the median of the other entries' figures
// (the mean of the two middle ones for an even count), in input order. Each is compared
// with the others only, so that one slow link does not pull down its own yardstick; with
// fewer than two entries nothing is flagged. A figure of 0 (not measured) is flagged when
// its peers' median is positive. Throws std::invalid_argument for a threshold outside
// (0, 1] or a negative or non-finite figure.
[[nodiscard]] std::vector<SlowLink> slow_links(std::span<const double> per_device_gbps, double threshold = 0.75);

}  // namespace streampipe
