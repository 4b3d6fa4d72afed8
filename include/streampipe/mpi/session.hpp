// SPDX-License-Identifier: Apache-2.0
#pragma once
// The MPI session of a program launched by mpirun: one rank per GPU, each knowing its rank,
// the job's size and its place on its host (mpi::local_device picks its GPU from that). It is
// the mpi::Job the tools run in under mpirun. The rest of the work is pure and MPI-free
// (mpi/ranks.hpp: shards; mpi/gather.hpp: a job's parts; report/trace_merge.hpp: one trace
// from all ranks); this class only moves strings and numbers between ranks.
//
// Threads: only the thread that constructed the session may call its members (MPI is
// initialized at MPI_THREAD_FUNNELED: the engine's own threads never call MPI).
// Errors: every failing MPI call throws std::runtime_error naming the call and MPI's text for
// the error (the session's communicator returns errors instead of aborting the job). Collective
// members (all but the accessors) must be called by every rank, in the same order.

#include "streampipe/mpi/job.hpp"

#include <mpi.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace streampipe::mpi {

class MpiSession final : public Job {
 public:
  // Initializes MPI (MPI_Init_thread, MPI_THREAD_FUNNELED) unless it already is, and then
  // finalizes it in the destructor; otherwise MPI's owner finalizes it. Works on a duplicate of
  // `comm` (default MPI_COMM_WORLD), so its messages never meet the caller's. When it
  // initializes MPI it also makes MPI_COMM_WORLD return errors rather than abort.
  // Throws std::runtime_error when MPI was already finalized, provides less than
  // MPI_THREAD_FUNNELED, or a call fails (MPI is then finalized again if this initialized it).
  explicit MpiSession(MPI_Comm comm = MPI_COMM_WORLD);
  ~MpiSession() override;  // frees the communicators; MPI_Finalize if this initialized MPI; never throws
  MpiSession(const MpiSession&) = delete;
  MpiSession& operator=(const MpiSession&) = delete;
  MpiSession(MpiSession&&) = delete;
  MpiSession& operator=(MpiSession&&) = delete;

  [[nodiscard]] int rank() const noexcept { return info_.rank; }
  [[nodiscard]] int size() const noexcept { return info_.size; }
  [[nodiscard]] int local_rank() const noexcept { return info_.local_rank; }  // among the ranks on this host
  [[nodiscard]] int local_size() const noexcept { return info_.local_size; }
  [[nodiscard]] const RankInfo& info() const noexcept override { return info_; }
  [[nodiscard]] const std::string& host() const noexcept override { return host_; }  // MPI_Get_processor_name
  [[nodiscard]] bool owns_mpi() const noexcept { return owns_mpi_; }        // this initialized MPI
  [[nodiscard]] MPI_Comm communicator() const noexcept { return comm_; }    // the session's duplicate

  // Collective. At rank 0: every rank's string, in rank order; elsewhere: an empty vector.
  // Throws std::length_error on every rank (before any data moves) when the strings together
  // exceed INT_MAX bytes, MPI's limit for one gather.
  [[nodiscard]] std::vector<std::string> gather_strings(std::string_view mine) const override;
  // Collective. The largest value over the ranks, on every rank (e.g. the job's exit status).
  [[nodiscard]] int max_over_ranks(int value) const override;
  // Collective. The sum over the ranks, on every rank (e.g. items done, bytes written).
  [[nodiscard]] std::uint64_t sum_over_ranks(std::uint64_t value) const;
  // Collective. Returns when every rank has called it.
  void barrier() const override;

 private:
  void release() noexcept;

  bool owns_mpi_ = false;
  MPI_Comm comm_ = MPI_COMM_NULL;
  RankInfo info_;
  std::string host_;
};

}  // namespace streampipe::mpi
