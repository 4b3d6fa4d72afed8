// SPDX-License-Identifier: Apache-2.0
#pragma once
// A GPU as `info` reports it (the CLI prints it; this builds the JSON): its properties,
// memory and PCIe link, and the link figures measured by cuda/bandwidth.hpp keyed by path
// ("pinned_h2d"...: median_gbps, min_gbps, max_gbps, bytes, label), the keys
// scripts/compare_info_probe.py reads.

#include "streampipe/cuda/bandwidth.hpp"
#include "streampipe/cuda/device.hpp"

#include <nlohmann/json.hpp>

namespace streampipe {

[[nodiscard]] nlohmann::json describe_device(const Device& device);
[[nodiscard]] nlohmann::json link_json(const LinkLimits& limits);

}  // namespace streampipe
