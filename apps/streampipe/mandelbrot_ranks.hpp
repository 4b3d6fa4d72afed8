// SPDX-License-Identifier: Apache-2.0
#pragma once
// mandelbrot under mpirun: rank r computes its rows (report::shard_range over the height) on
// its node-local GPU, or on the host backend, and rank 0 gathers every band into the one
// image, which it alone checks, writes and reports. Collective: every rank calls it once.

#include "devices_option.hpp"
#include "ranks.hpp"

#include "streampipe/tools/mandelbrot/bands.hpp"

#include <optional>
#include <string>

namespace streampipe::cli {

struct RankedImage {
  tools::mandelbrot::SpreadRun run;  // the whole image; a band per rank; compute_ms: the slowest rank's
  std::string where;                 // "3 ranks: ..." for the summary line
};

// At rank 0 the gathered image; elsewhere nullopt once its band is sent. Throws what the
// computation throws (the rank then ends the job), std::runtime_error on a band of the
// wrong size.
[[nodiscard]] std::optional<RankedImage> compute_ranked(const Ranks& ranks, const DeviceChoice& choice,
                                                        const tools::mandelbrot::Params& params,
                                                        tools::mandelbrot::Precision precision);

}  // namespace streampipe::cli
