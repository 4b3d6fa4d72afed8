// SPDX-License-Identifier: Apache-2.0
#include "streampipe/mpi/ranks.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <stdexcept>
#include <string_view>

namespace streampipe::mpi {
namespace {

// The variables one launcher sets; nullptr where it sets none for that field.
struct LauncherVariables {
  const char* rank;
  const char* size;
  const char* local_rank;
  const char* local_size;
};

constexpr LauncherVariables kLaunchers[] = {
    {"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_SIZE"},
    {"SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID", nullptr},
    {"PMI_RANK", "PMI_SIZE", "MPI_LOCALRANKID", "MPI_LOCALNRANKS"},
    {"PMIX_RANK", nullptr, nullptr, nullptr},
};

// std::nullopt when the variable is unset; its value when it is a whole non-negative int.
std::optional<int> read_count(const char* variable) {
  if (variable == nullptr) return std::nullopt;
  const char* text = std::getenv(variable);
  if (text == nullptr) return std::nullopt;
  const std::string_view value(text);
  int parsed = 0;
  const auto [end, error] = std::from_chars(value.data(), value.data() + value.size(), parsed);
  if (value.empty() || error != std::errc{} || end != value.data() + value.size() || parsed < 0)
    throw std::invalid_argument(fmt::format("{}='{}' is not a non-negative integer", variable, value));
  return parsed;
}

void require_positive(const char* variable, int value) {
  if (value < 1) throw std::invalid_argument(fmt::format("{}={} is not a positive count", variable, value));
}

void require_below(const char* what, int value, const char* bound_name, int bound) {
  if (value >= bound)
    throw std::invalid_argument(fmt::format("{}={} is not below {}={}", what, value, bound_name, bound));
}

}  // namespace

std::optional<RankInfo> rank_from_environment() {
  for (const LauncherVariables& launcher : kLaunchers) {
    const std::optional<int> rank = read_count(launcher.rank);
    if (!rank) continue;
    RankInfo info{*rank, 0, 0, 0};
    if (const auto size = read_count(launcher.size)) {
      require_positive(launcher.size, *size);
      require_below(launcher.rank, info.rank, launcher.size, *size);
      info.size = *size;
    }
    if (const auto local_rank = read_count(launcher.local_rank)) info.local_rank = *local_rank;
    if (const auto local_size = read_count(launcher.local_size)) {
      require_positive(launcher.local_size, *local_size);
      if (launcher.local_rank) require_below(launcher.local_rank, info.local_rank, launcher.local_size, *local_size);
      info.local_size = *local_size;
    }
    return info;
  }
  return std::nullopt;
}

ShardRange shard_range(std::size_t total, int rank, int size) {
  if (size < 1) throw std::invalid_argument(fmt::format("shard_range: size {} is not positive", size));
  if (rank < 0 || rank >= size)
    throw std::invalid_argument(fmt::format("shard_range: rank {} is outside [0, {})", rank, size));
  const auto n = static_cast<std::size_t>(size);
  const auto r = static_cast<std::size_t>(rank);
  const std::size_t base = total / n;
  const std::size_t extra = total % n;
  // r * base <= total, so nothing here can overflow.
  const std::size_t begin = r * base + std::min(r, extra);
  return {begin, begin + base + (r < extra ? 1 : 0)};
}

int local_device(int local_rank, int device_count) {
  if (device_count < 1)
    throw std::invalid_argument(fmt::format("local_device: no device to choose from (device_count {})", device_count));
  if (local_rank < 0) throw std::invalid_argument(fmt::format("local_device: local rank {} is negative", local_rank));
  return local_rank % device_count;
}

}  // namespace streampipe::mpi
