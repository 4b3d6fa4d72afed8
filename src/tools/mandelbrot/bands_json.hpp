// SPDX-License-Identifier: Apache-2.0
#pragma once
// Private to src/tools/mandelbrot: bands and device shares as JSON, for the report's "bands"
// and "devices" and for the ranks' parts under mpirun (the same keys both ways). from_json
// throws nlohmann::json's errors for a missing key or a wrong type.

#include "streampipe/tools/mandelbrot/bands.hpp"

#include <nlohmann/json.hpp>

namespace streampipe::tools::mandelbrot {

void to_json(nlohmann::json& j, const BandRun& b);
void from_json(const nlohmann::json& j, BandRun& b);
void to_json(nlohmann::json& j, const DeviceShare& d);
void from_json(const nlohmann::json& j, DeviceShare& d);

}  // namespace streampipe::tools::mandelbrot
