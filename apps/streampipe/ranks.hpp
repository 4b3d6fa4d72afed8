// SPDX-License-Identifier: Apache-2.0
#pragma once
// Where this process sits when mpirun started several (one rank per GPU), and what the tools
// do together then: each rank takes its shard of the work on its node-local GPU, rank 0
// alone prints the summary, and results, traces and exit statuses are gathered to it.
// Without a launcher there is one rank and every call stays local. MPI lives in ranks.cpp
// only (streampipe::mpi, where the build has it).

#include "streampipe/report/ranks.hpp"

#include <string>
#include <vector>

namespace streampipe::cli {

class Ranks {
 public:
  // The process's ranks: MPI is started here when a launcher started the process. Throws
  // UsageError when a launcher started several ranks of a streampipe built without MPI
  // (each would otherwise run the whole job), std::runtime_error when MPI fails to start.
  static void start();
  // What start() set up (one rank when it was not called).
  [[nodiscard]] static const Ranks& get();
  // Ends MPI, when start() began it; every rank must call it (main, after the command).
  static void stop() noexcept;
  // Ends every rank of the job with `status` (MPI_Abort): for a rank that cannot take part
  // in the collective steps the others wait in. Returns only without MPI.
  static void abort(int status) noexcept;

  [[nodiscard]] const report::RankInfo& info() const noexcept { return info_; }
  [[nodiscard]] bool several() const noexcept { return info_.size > 1; }
  [[nodiscard]] bool leader() const noexcept { return info_.rank == 0; }
  // " (rank N)" under mpirun, "" alone: for messages that a rank prints itself.
  [[nodiscard]] std::string tag() const;
  // The host's name as MPI knows it ("" alone).
  [[nodiscard]] const std::string& host() const noexcept { return host_; }

  // Collective: at rank 0 every rank's string in rank order, elsewhere nothing; alone, {mine}.
  [[nodiscard]] std::vector<std::string> gather(const std::string& mine) const;
  // Collective: the largest status over the ranks, so that every rank exits with the job's.
  [[nodiscard]] int job_status(int mine) const;
  // Collective: returns once every rank called it.
  void barrier() const;

 private:
  report::RankInfo info_;
  std::string host_;
};

}  // namespace streampipe::cli
