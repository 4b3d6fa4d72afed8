// SPDX-License-Identifier: Apache-2.0
#pragma once
// Private to src/tools/mandelbrot: rows of a run's image through the engine as the tool sets
// it up (run.cpp), for one process and for each rank (gather.cpp) alike, and the words for
// where they ran.

#include "streampipe/tools/mandelbrot/run.hpp"

#include <string>
#include <vector>

namespace streampipe::tools::mandelbrot {

// `part`'s bands dealt over o.engine's device set. Throws what compute_bands throws.
[[nodiscard]] BandsRun compute_part(const Options& o, RowBand part);

// The members that computed bands: "GPU 0 (NVIDIA H100 ...)", "the CPU and GPU 0 (...)",
// "3 simulated GPUs", "the CPU" (the CPU named `cpu`); "nowhere" when none did.
[[nodiscard]] std::string where_of(const std::vector<DeviceShare>& devices, const std::string& cpu = "the CPU");

}  // namespace streampipe::tools::mandelbrot
