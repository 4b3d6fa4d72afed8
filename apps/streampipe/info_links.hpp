// SPDX-License-Identifier: Apache-2.0
#pragma once
// The part of `info` that compares the GPUs' links: a table of each GPU's pinned figures,
// the GPUs copying all at once (cuda/aggregate_bandwidth.hpp) against the sum of their
// links, and a line for each link far below its peers (cuda/slow_links.hpp).

#include "outputs.hpp"

#include "streampipe/cuda/bandwidth.hpp"
#include "streampipe/cuda/device.hpp"

#include <nlohmann/json.hpp>

#include <vector>

namespace streampipe::cli {

// Below this fraction of the other GPUs' median a link is flagged.
inline constexpr double kSlowLinkThreshold = 0.75;

// Prints the table, measures and prints the aggregate and the flags through `out`, and
// adds "aggregate" and "slow_links" to `j`. `links[i]` is devices[i]'s measure_link.
void report_links(const Outputs& out, const std::vector<Device>& devices, const std::vector<LinkLimits>& links,
                  const BandwidthOptions& options, nlohmann::json& j);

}  // namespace streampipe::cli
