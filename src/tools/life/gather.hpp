// SPDX-License-Identifier: Apache-2.0
#pragma once
// Private to src/tools/life: Life under mpirun. Rank r ran its share of the universes
// (Job::shard, seeds and frames by the universe's place in the whole job) on its node-local
// GPU; rank 0 gathers every universe's populations (mpi::gather_parts) to report the job's
// one table, population file and summary. Collective: every rank calls it once, after its run.

#include "streampipe/mpi/job.hpp"
#include "streampipe/tools/life/run.hpp"

#include <optional>
#include <string>
#include <vector>

namespace streampipe::tools::life {

struct JobLife {
  std::vector<UniverseOutcome> universes;  // every universe of the job, in order
  double stepping_ms = 0;                  // the slowest rank's
  double output_ms = 0;                    // the slowest rank's
  std::string where;                       // "2 ranks (rank 0 on host GPU 0 (...); ...)"
};

// At rank 0 the job's universes; elsewhere nullopt once its own are sent. `where` says where
// this rank ran (its GPU or the host). Throws std::runtime_error on a malformed message.
[[nodiscard]] std::optional<JobLife> gather_life(const mpi::Job& job, const std::vector<UniverseOutcome>& mine,
                                                 double stepping_ms, double output_ms, const std::string& where);

}  // namespace streampipe::tools::life
