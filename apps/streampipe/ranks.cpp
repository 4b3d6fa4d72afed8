// SPDX-License-Identifier: Apache-2.0
#include "ranks.hpp"

#include "commands.hpp"

#include <fmt/format.h>

#include <memory>

#if defined(STREAMPIPE_HAVE_MPI)
#include "streampipe/mpi/session.hpp"
#endif

namespace streampipe::cli {
namespace {

Ranks& the_ranks() {
  static Ranks ranks;
  return ranks;
}

#if defined(STREAMPIPE_HAVE_MPI)
std::unique_ptr<mpi::MpiSession>& session() {
  static std::unique_ptr<mpi::MpiSession> s;
  return s;
}
#endif

}  // namespace

void Ranks::start() {
  const auto launched = report::rank_from_environment();
  if (!launched) return;
#if defined(STREAMPIPE_HAVE_MPI)
  session() = std::make_unique<mpi::MpiSession>();
  the_ranks().info_ = session()->info();
  the_ranks().host_ = session()->host();
#else
  if (launched->size > 1)
    throw UsageError(fmt::format("started as rank {} of {} by a launcher (mpirun), but this streampipe was built "
                                 "without MPI: every rank would run the whole job. Rebuild with OpenMPI "
                                 "(scripts/install-deps; STREAMPIPE_WITH_MPI=ON), or run it once without mpirun",
                                 launched->rank, launched->size));
#endif
}

const Ranks& Ranks::get() { return the_ranks(); }

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

std::string Ranks::tag() const { return several() ? fmt::format(" (rank {})", info_.rank) : std::string(); }

std::vector<std::string> Ranks::gather(const std::string& mine) const {
#if defined(STREAMPIPE_HAVE_MPI)
  if (session()) return session()->gather_strings(mine);
#endif
  return {mine};
}

int Ranks::job_status(int mine) const {
#if defined(STREAMPIPE_HAVE_MPI)
  if (session()) return session()->max_over_ranks(mine);
#endif
  return mine;
}

void Ranks::barrier() const {
#if defined(STREAMPIPE_HAVE_MPI)
  if (session()) session()->barrier();
#endif
}

}  // namespace streampipe::cli
