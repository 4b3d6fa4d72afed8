// SPDX-License-Identifier: Apache-2.0
#pragma once
// The CLI's process among the ranks when mpirun started several (one rank per GPU): MPI
// started and ended around the command, and the job the tools run in (mpi::Job: each rank
// takes its shard on its node-local GPU, rank 0 alone prints, results and exit statuses are
// gathered to it). Without a launcher the job is a process alone. MPI lives in ranks.cpp only
// (streampipe::mpi, where the build has it).

#include "streampipe/mpi/job.hpp"

#include <string>

namespace streampipe::cli {

class Ranks {
 public:
  // The process's ranks: MPI is started here when a launcher started the process. Throws
  // UsageError when a launcher started several ranks of a streampipe built without MPI
  // (each would otherwise run the whole job), std::runtime_error when MPI fails to start.
  static void start();
  // The job start() set up (a process alone when it was not called).
  [[nodiscard]] static const mpi::Job& get();
  // Ends MPI, when start() began it; every rank must call it (main, after the command).
  static void stop() noexcept;
  // Ends every rank of the job with `status` (MPI_Abort): for a rank that cannot take part
  // in the collective steps the others wait in. Returns only without MPI.
  static void abort(int status) noexcept;
  // " (rank N)" under mpirun, "" alone: for messages that a rank prints itself.
  [[nodiscard]] static std::string tag();
};

}  // namespace streampipe::cli
