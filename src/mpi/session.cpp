// SPDX-License-Identifier: Apache-2.0
#include "streampipe/mpi/session.hpp"

#include <fmt/format.h>

#include <climits>
#include <numeric>
#include <stdexcept>

namespace streampipe::mpi {
namespace {

void check(int status, const char* call) {
  if (status == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING] = {};
  int length = 0;
  if (MPI_Error_string(status, text, &length) != MPI_SUCCESS) length = 0;
  throw std::runtime_error(fmt::format("{} failed: {}", call, length > 0 ? std::string_view(text, static_cast<std::size_t>(length))
                                                                         : std::string_view("unknown MPI error")));
}

}  // namespace

MpiSession::MpiSession(MPI_Comm comm) {
  int initialized = 0, finalized = 0;
  check(MPI_Initialized(&initialized), "MPI_Initialized");
  check(MPI_Finalized(&finalized), "MPI_Finalized");
  if (finalized) throw std::runtime_error("MpiSession: MPI was already finalized and cannot be initialized again");
  if (!initialized) {
    int provided = 0;
    check(MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided), "MPI_Init_thread");
    owns_mpi_ = true;
  }
  try {
    if (owns_mpi_) check(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN), "MPI_Comm_set_errhandler");
    int provided = 0;
    check(MPI_Query_thread(&provided), "MPI_Query_thread");
    if (provided < MPI_THREAD_FUNNELED)
      throw std::runtime_error(fmt::format(
          "MpiSession: MPI provides thread level {}; streampipe runs threads of its own, so it needs MPI_THREAD_FUNNELED",
          provided));
    check(MPI_Comm_dup(comm, &comm_), "MPI_Comm_dup");
    check(MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN), "MPI_Comm_set_errhandler");
    check(MPI_Comm_rank(comm_, &info_.rank), "MPI_Comm_rank");
    check(MPI_Comm_size(comm_, &info_.size), "MPI_Comm_size");
    // The ranks that share memory with this one are the ones on its host.
    MPI_Comm host_comm = MPI_COMM_NULL;
    check(MPI_Comm_split_type(comm_, MPI_COMM_TYPE_SHARED, info_.rank, MPI_INFO_NULL, &host_comm), "MPI_Comm_split_type");
    const int rank_status = MPI_Comm_rank(host_comm, &info_.local_rank);
    const int size_status = MPI_Comm_size(host_comm, &info_.local_size);
    MPI_Comm_free(&host_comm);
    check(rank_status, "MPI_Comm_rank");
    check(size_status, "MPI_Comm_size");
    char name[MPI_MAX_PROCESSOR_NAME] = {};
    int length = 0;
    check(MPI_Get_processor_name(name, &length), "MPI_Get_processor_name");
    host_.assign(name, static_cast<std::size_t>(length));
  } catch (...) {
    release();
    throw;
  }
}

MpiSession::~MpiSession() { release(); }

void MpiSession::release() noexcept {
  int finalized = 1;
  if (MPI_Finalized(&finalized) != MPI_SUCCESS || finalized) return;
  if (comm_ != MPI_COMM_NULL) MPI_Comm_free(&comm_);
  if (owns_mpi_) MPI_Finalize();
  owns_mpi_ = false;
}

std::vector<std::string> MpiSession::gather_strings(std::string_view mine) const {
  // Every rank learns every size, so all of them see the same total and throw together:
  // a rank that threw alone would leave the others waiting in the gather below.
  const std::uint64_t my_size = mine.size();
  std::vector<std::uint64_t> sizes(static_cast<std::size_t>(info_.size));
  check(MPI_Allgather(&my_size, 1, MPI_UINT64_T, sizes.data(), 1, MPI_UINT64_T, comm_), "MPI_Allgather");
  std::uint64_t total = 0;
  for (std::uint64_t s : sizes) {
    if (s > static_cast<std::uint64_t>(INT_MAX) - total)
      throw std::length_error(fmt::format("gather_strings: the ranks' strings exceed {} bytes together", INT_MAX));
    total += s;
  }
  std::vector<int> counts, offsets;
  std::string all;
  if (info_.rank == 0) {
    counts.resize(sizes.size());
    offsets.resize(sizes.size());
    for (std::size_t r = 0; r < sizes.size(); ++r) counts[r] = static_cast<int>(sizes[r]);
    std::exclusive_scan(counts.begin(), counts.end(), offsets.begin(), 0);
    all.resize(static_cast<std::size_t>(total));
  }
  check(MPI_Gatherv(mine.data(), static_cast<int>(my_size), MPI_CHAR, all.data(), counts.data(), offsets.data(), MPI_CHAR, 0,
                    comm_),
        "MPI_Gatherv");
  std::vector<std::string> strings;
  if (info_.rank == 0) {
    strings.reserve(sizes.size());
    for (std::size_t r = 0; r < sizes.size(); ++r)
      strings.push_back(all.substr(static_cast<std::size_t>(offsets[r]), static_cast<std::size_t>(counts[r])));
  }
  return strings;
}

int MpiSession::max_over_ranks(int value) const {
  int result = 0;
  check(MPI_Allreduce(&value, &result, 1, MPI_INT, MPI_MAX, comm_), "MPI_Allreduce");
  return result;
}

std::uint64_t MpiSession::sum_over_ranks(std::uint64_t value) const {
  std::uint64_t result = 0;
  check(MPI_Allreduce(&value, &result, 1, MPI_UINT64_T, MPI_SUM, comm_), "MPI_Allreduce");
  return result;
}

void MpiSession::barrier() const { check(MPI_Barrier(comm_), "MPI_Barrier"); }

}  // namespace streampipe::mpi
