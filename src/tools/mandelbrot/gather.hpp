// SPDX-License-Identifier: Apache-2.0
#pragma once
// Private to src/tools/mandelbrot: Mandelbrot under mpirun. Rank r takes its rows (Job::shard
// over the height) and deals them as bands over its own engine's set (its node-local GPU,
// the CPU, or both: part.hpp), and rank 0 gathers every rank's rows (mpi::gather_parts, the
// counts as bytes) into the one image, which it alone checks and reports. Collective: every
// rank calls it once.

#include "streampipe/tools/mandelbrot/run.hpp"

#include <optional>
#include <string>
#include <vector>

namespace streampipe::tools::mandelbrot {

struct RankedImage {
  std::vector<std::uint32_t> counts;  // the whole image
  double compute_ms = 0;              // the slowest rank's
  std::vector<BandRun> bands;         // every rank's, in row order
  std::vector<DeviceShare> devices;   // every rank's members, DeviceShare::rank set
  std::string where;                  // "3 ranks (...)" for the summary line
  std::string engine;                 // rank 0's engine
};

// At rank 0 the gathered image; elsewhere nullopt once its rows are sent. Throws what the
// computation throws (the rank then ends the job), std::runtime_error on a part of the
// wrong size.
[[nodiscard]] std::optional<RankedImage> compute_ranked(const Options& options);

}  // namespace streampipe::tools::mandelbrot
