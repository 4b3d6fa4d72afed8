// SPDX-License-Identifier: Apache-2.0
#pragma once
// life under mpirun: rank r runs its share of the universes (report::shard_range, seeds and
// frame names by the universe's place in the whole job) on its node-local GPU, and rank 0
// gathers every universe's populations to print and write the job's one table, population
// file and report. Collective: every rank calls gather_life once, after its run.

#include "life_population.hpp"
#include "ranks.hpp"

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace streampipe::cli {

struct UniverseOutcome {
  int runs_on = -1;  // the GPU (or simulated device) that ran it
  PopulationLog populations{false};
};

struct JobLife {
  std::vector<UniverseOutcome> universes;  // every universe of the job, in order
  double stepping_ms = 0;                  // the slowest rank's
  double output_ms = 0;                    // the slowest rank's
  std::string where;                       // "2 ranks: rank 0 on host GPU 0 (...); ..."
};

// At rank 0 the job's universes; elsewhere nullopt once its own are sent. `where` says where
// this rank ran (its GPU or the host). Throws std::runtime_error on a malformed message.
[[nodiscard]] std::optional<JobLife> gather_life(const Ranks& ranks, const std::vector<UniverseOutcome>& mine,
                                                 double stepping_ms, double output_ms, const std::string& where);

}  // namespace streampipe::cli
