// SPDX-License-Identifier: Apache-2.0
// How long a Life run's chunks are (see chunk_rule.hpp).
#include "chunk_rule.hpp"

#include <algorithm>
#include <vector>

namespace streampipe::tools::life::detail {

std::uint64_t next_chunk(const ChunkRule& rule, const ChunkTime& last, std::uint64_t left,
                         std::uint64_t until_board) noexcept {
  const std::uint64_t most = std::max<std::uint64_t>(1, rule.most);
  std::uint64_t n = most;
  if (last.generations == 0) {
    n = rule.first;
  } else if (last.ms > 0) {  // else too quick to time (or no time at all): the most
    // Compared as doubles: a quick chunk's quotient may lie far beyond any uint64.
    const double fit = rule.target_ms * static_cast<double>(last.generations) / last.ms;
    n = fit >= static_cast<double>(most) ? most : static_cast<std::uint64_t>(fit);
  }
  n = std::clamp<std::uint64_t>(n, 1, most);
  if (until_board > 0) n = std::min(n, until_board);
  return std::min(n, left);
}

double stepping_ms(std::span<const pipeline::ItemResult> items) {
  std::vector<double> lanes;  // lanes are numbered from 0 across the set
  for (const auto& r : items) {
    if (r.lane < 0 || !(r.timing.compute_ms > 0)) continue;
    const auto lane = static_cast<std::size_t>(r.lane);
    if (lanes.size() <= lane) lanes.resize(lane + 1, 0.0);
    lanes[lane] += r.timing.compute_ms / static_cast<double>(std::max<std::size_t>(1, r.batch_size));
  }
  return lanes.empty() ? 0.0 : *std::max_element(lanes.begin(), lanes.end());
}

std::uint64_t most_generations(std::size_t universes) noexcept {
  // 32 MiB of populations: 64 universes take 65536 generations a chunk, 1024 take 4096.
  constexpr std::uint64_t kBudget = std::uint64_t{32} << 20;
  constexpr std::uint64_t kMost = 65536;
  return std::clamp<std::uint64_t>(kBudget / sizeof(std::uint64_t) / std::max<std::uint64_t>(1, universes), 1, kMost);
}

}  // namespace streampipe::tools::life::detail
