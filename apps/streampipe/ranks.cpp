// SPDX-License-Identifier: Apache-2.0
#include "ranks.hpp"

#include "commands.hpp"

#include <fmt/format.h>

#include <sched.h>

#include <memory>
#include <thread>
#include <vector>

#if defined(STREAMPIPE_HAVE_MPI)
#include "streampipe/mpi/session.hpp"
#endif

namespace streampipe::cli {
namespace {

#if defined(STREAMPIPE_HAVE_MPI)
std::unique_ptr<mpi::MpiSession>& session() {
  static std::unique_ptr<mpi::MpiSession> s;
  return s;
}

// Ranks of one host that mpirun left unbound would each start a worker per core of the host:
// each takes its own slice of the cores instead, so that the ranks' staging threads do not
// fight for them. A rank bound already (--bind-to, taskset) keeps what it was given.
void share_cores(int local_rank, int local_size) noexcept {
  cpu_set_t mask;
  CPU_ZERO(&mask);
  if (local_size < 2 || sched_getaffinity(0, sizeof(mask), &mask) != 0) return;
  if (static_cast<unsigned>(CPU_COUNT(&mask)) < std::thread::hardware_concurrency()) return;  // bound already
  std::vector<int> cores;
  for (int c = 0; c < CPU_SETSIZE; ++c)
    if (CPU_ISSET(c, &mask)) cores.push_back(c);
  const std::size_t n = cores.size(), r = static_cast<std::size_t>(local_rank), size = static_cast<std::size_t>(local_size);
  if (n < size) return;
  cpu_set_t mine;
  CPU_ZERO(&mine);
  for (std::size_t i = r * n / size; i < (r + 1) * n / size; ++i) CPU_SET(cores[i], &mine);
  (void)sched_setaffinity(0, sizeof(mine), &mine);  // a refusal leaves the rank on every core
}
#endif

}  // namespace

void Ranks::start() {
  const auto launched = mpi::rank_from_environment();
  if (!launched) return;
#if defined(STREAMPIPE_HAVE_MPI)
  session() = std::make_unique<mpi::MpiSession>();
  share_cores(session()->local_rank(), session()->local_size());
#else
  if (launched->size > 1)
    throw UsageError(fmt::format("started as rank {} of {} by a launcher (mpirun), but this streampipe was built "
                                 "without MPI: every rank would run the whole job. Rebuild with OpenMPI "
                                 "(scripts/install-deps; STREAMPIPE_WITH_MPI=ON), or run it once without mpirun",
                                 launched->rank, launched->size));
#endif
}

const mpi::Job& Ranks::get() {
#if defined(STREAMPIPE_HAVE_MPI)
  if (session()) return *session();
#endif
  return mpi::Job::single();
}

void Ranks::stop() noexcept {
#if defined(STREAMPIPE_HAVE_MPI)
  session().reset();
#endif
}

void Ranks::abort([[maybe_unused]] int status) noexcept {
#if defined(STREAMPIPE_HAVE_MPI)
  if (session()) MPI_Abort(session()->communicator(), status);
#endif
}

std::string Ranks::tag() {
  const mpi::Job& job = get();
  return job.several() ? fmt::format(" (rank {})", job.info().rank) : std::string();
}

}  // namespace streampipe::cli
