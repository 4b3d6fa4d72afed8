// SPDX-License-Identifier: Apache-2.0
#pragma once
// The ranks of a job as a tool's run sees them: where this process sits (RankInfo, the host's
// name), its shard of the work, and the collective steps the ranks take together (strings
// gathered to rank 0, the job's exit status, a barrier). A tool takes a Job and never MPI:
// mpi::MpiSession (the opt-in streampipe::mpi layer) is the MPI one, Job::single() a process
// alone, where every collective step stays local. Part of core, so tools link no MPI.
//
// Collective members must be called by every rank, in the same order, from the thread that
// made the job; they throw what the job's transport throws (std::runtime_error for MPI).

#include "streampipe/mpi/ranks.hpp"

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace streampipe::mpi {

class Job {
 public:
  virtual ~Job() = default;

  [[nodiscard]] virtual const RankInfo& info() const noexcept = 0;
  [[nodiscard]] virtual const std::string& host() const noexcept = 0;  // the host's name ("" alone)
  [[nodiscard]] bool several() const noexcept { return info().size > 1; }
  [[nodiscard]] bool leader() const noexcept { return info().rank == 0; }
  // This rank's contiguous part of items 0..total-1 (shard_range): the whole when alone.
  [[nodiscard]] ShardRange shard(std::size_t total) const { return shard_range(total, info().rank, info().size); }
  // The GPUs of `devices` this rank takes: all of them alone; under mpirun the one its place
  // on its host picks (local_device), so the ranks of a host share them out. Empty stays empty.
  [[nodiscard]] std::vector<int> local_devices(const std::vector<int>& devices) const {
    if (!several() || devices.empty()) return devices;
    return {devices[static_cast<std::size_t>(local_device(info().local_rank, static_cast<int>(devices.size())))]};
  }

  // Collective. At rank 0 every rank's string, in rank order; elsewhere an empty vector.
  [[nodiscard]] virtual std::vector<std::string> gather_strings(std::string_view mine) const = 0;
  // Collective. The largest value over the ranks, on every rank (the job's exit status).
  [[nodiscard]] virtual int max_over_ranks(int value) const = 0;
  // Collective. Returns once every rank has called it.
  virtual void barrier() const = 0;

  // A process alone: rank 0 of 1, gather_strings returns {mine}, the others are local.
  [[nodiscard]] static const Job& single();

 protected:
  Job() = default;
  Job(const Job&) = default;
  Job& operator=(const Job&) = default;
};

}  // namespace streampipe::mpi
