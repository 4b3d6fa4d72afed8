// SPDX-License-Identifier: Apache-2.0
// A user's program on streampipe::mpi: run under mpirun, each rank takes its shard of 1000
// items and the ranks check together that the shards cover every item once. Exit status 0
// only when they do on every rank.

#include "streampipe/mpi/session.hpp"
#include "streampipe/mpi/ranks.hpp"

#include <cstdio>

int main() {
  streampipe::mpi::MpiSession session;
  constexpr std::size_t items = 1000;
  const auto shard = streampipe::mpi::shard_range(items, session.rank(), session.size());
  const std::uint64_t covered = session.sum_over_ranks(shard.size());
  const auto hosts = session.gather_strings(session.host());
  const std::size_t hosts_expected = session.rank() == 0 ? static_cast<std::size_t>(session.size()) : 0;
  const int status = session.max_over_ranks(covered == items && hosts.size() == hosts_expected ? 0 : 1);
  if (session.rank() == 0)
    std::printf("mpi_consumer: %d ranks, %llu of %zu items covered: %s\n", session.size(),
                static_cast<unsigned long long>(covered), items, status == 0 ? "ok" : "FAILED");
  return status;
}
