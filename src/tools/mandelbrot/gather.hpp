// SPDX-License-Identifier: Apache-2.0
#pragma once
// Private to src/tools/mandelbrot: Mandelbrot under mpirun. Rank r computes its rows
// (Job::shard over the height) on its node-local GPU, or on the host backend, and rank 0
// gathers every band (mpi::gather_parts, the counts as bytes) into the one image, which it
// alone checks and reports. Collective: every rank calls it once.

#include "streampipe/tools/mandelbrot/run.hpp"

#include <optional>
#include <string>

namespace streampipe::tools::mandelbrot {

struct RankedImage {
  SpreadRun run;      // the whole image; a band per rank; compute_ms: the slowest rank's
  std::string where;  // "3 ranks (...)" for the summary line
};

// At rank 0 the gathered image; elsewhere nullopt once its band is sent. Throws what the
// computation throws (the rank then ends the job), std::runtime_error on a band of the
// wrong size.
[[nodiscard]] std::optional<RankedImage> compute_ranked(const Options& options);

}  // namespace streampipe::tools::mandelbrot
