// SPDX-License-Identifier: Apache-2.0
#pragma once
// Where a process sits among the ranks of a job launched by mpirun (or srun), and which part
// of the work and which GPU are its own. Pure functions, no MPI: a program reads the
// launcher's environment before it initializes MPI (and, built without the mpi layer, says
// so instead of running the whole job N times), and every rank computes the same shards from
// (total, rank, size) alone, so no message is needed to split the work.

#include <cstddef>
#include <optional>

namespace streampipe::mpi {

// The defaults (size 1) describe a process not under a launcher. local_rank/local_size count
// the ranks on this host. From rank_from_environment(), a count the launcher does not give is
// 0 ("not told") and a local rank it does not give is 0; mpi::MpiSession knows them all.
struct RankInfo {
  int rank = 0;
  int size = 1;
  int local_rank = 0;
  int local_size = 1;

  friend bool operator==(const RankInfo&, const RankInfo&) = default;
};

// What the launcher set, in this order of precedence: OpenMPI (OMPI_COMM_WORLD_RANK, _SIZE,
// _LOCAL_RANK, _LOCAL_SIZE), Slurm's srun (SLURM_PROCID, SLURM_NTASKS, SLURM_LOCALID),
// MPICH/Hydra (PMI_RANK, PMI_SIZE, MPI_LOCALRANKID, MPI_LOCALNRANKS), PMIx (PMIX_RANK alone).
// nullopt when no launcher's rank variable is set. Throws std::invalid_argument naming the
// variable when a value is not a non-negative integer, a size is 0, or a rank is not below
// its size.
[[nodiscard]] std::optional<RankInfo> rank_from_environment();

// One rank's contiguous part [begin, end) of items 0..total-1.
struct ShardRange {
  std::size_t begin = 0;
  std::size_t end = 0;

  [[nodiscard]] std::size_t size() const noexcept { return end - begin; }
  friend bool operator==(const ShardRange&, const ShardRange&) = default;
};

// The shards of all ranks cover [0, total) exactly once, in rank order; their sizes differ by
// at most one, the lower ranks taking the extra items; a rank gets an empty shard when total
// < size. Throws std::invalid_argument when size < 1 or rank is outside [0, size).
[[nodiscard]] ShardRange shard_range(std::size_t total, int rank, int size);

// The node-local GPU a rank uses: local_rank % device_count, so ranks on one host spread over
// its GPUs and share them round-robin when there are more ranks than GPUs. Throws
// std::invalid_argument when device_count < 1 or local_rank < 0.
[[nodiscard]] int local_device(int local_rank, int device_count);

}  // namespace streampipe::mpi
