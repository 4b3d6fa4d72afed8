// SPDX-License-Identifier: Apache-2.0
#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

#include "temporal.hpp"

namespace streampipe::tools::life::detail {
namespace {

constexpr std::uint32_t kUnlimited = 64;  // no halo, or one of at least 64 cells each side

struct Columns {
  std::uint32_t full_row = 0, columns = 0, useful = 0, offset = 0, max_generations = 0;
};

// The cells the narrowest halo of a column plan holds (capped at kUnlimited). Only the
// partial last word (width % 64 cells) is narrower than 64, and only a halo of one lane
// can be that narrow: lane 0, or lane 31 when lanes 1..30 all write.
std::uint32_t halo_cells(std::uint32_t nw, std::uint32_t tail, std::uint32_t useful, std::uint32_t columns,
                         std::uint32_t offset) {
  if (tail == 0) return kUnlimited;
  // Lane 0 of column c holds word c * useful + offset - 1 (mod nw), and c * useful < nw.
  const bool left = offset == 0 || ((nw - 1) % useful == 0 && (nw - 1) / useful < columns);
  // Lane 31 of a column that writes 30 words holds word c * 30 + offset + 30.
  const bool right =
      useful == 30 && nw >= 31 + offset && (nw - 31 - offset) % 30 == 0 && (nw - 31 - offset) / 30 < columns;
  return left || right ? tail : kUnlimited;
}

Columns choose_columns(std::uint32_t width) {
  const std::uint32_t nw = (width + 63) / 64;
  Columns c;
  if (nw <= 32) {
    c.full_row = 1;
    c.columns = 1;
    c.useful = nw;
    c.max_generations = kUnlimited;
    return c;
  }
  c.columns = (nw + 29) / 30;
  const std::uint32_t tail = width % 64;
  // Any useful count that keeps the number of columns costs the same; pick one whose halo
  // lanes are not the partial word, so the board still takes 8 generations per launch.
  for (std::uint32_t useful = 30; useful * c.columns >= nw && useful >= 1; --useful)
    for (const std::uint32_t offset : {1u, 0u}) {
      const std::uint32_t cells = halo_cells(nw, tail, useful, c.columns, offset);
      if (cells > c.max_generations) {
        c.useful = useful;
        c.offset = offset;
        c.max_generations = cells;
      }
      if (c.max_generations == kUnlimited) return c;
    }
  return c;
}

unsigned power_of_two_at_most(std::uint32_t limit) {
  unsigned k = kMaxGenerationsPerLaunch;
  while (k > 1 && k > limit) k /= 2;
  return k;
}

}  // namespace

unsigned temporal_generations(std::uint32_t width, unsigned cap) {
  if (width == 0) throw std::invalid_argument("a Life board needs at least one cell");
  const std::uint32_t limit = choose_columns(width).max_generations;
  return power_of_two_at_most(cap == 0 ? limit : std::min<std::uint32_t>(limit, cap));
}

unsigned checked_generations_per_launch(unsigned generations) {
  if (generations != 0 && generations != 1 && generations != 2 && generations != 4 && generations != 8)
    throw std::invalid_argument(
        fmt::format("generations per launch must be 1, 2, 4 or 8 (0: by board), not {}", generations));
  return generations;
}

std::uint32_t checked_strip_rows(unsigned rows) {
  if (rows > 65536) throw std::invalid_argument(fmt::format("rows per thread must be at most 65536, not {}", rows));
  return rows;
}

TemporalPlan plan_temporal(std::uint32_t width, std::uint32_t height, std::uint32_t universes,
                           std::uint32_t resident_warps, unsigned generations, std::uint32_t strip_rows) {
  if (width == 0 || height == 0 || universes == 0)
    throw std::invalid_argument(fmt::format("cannot plan {} universes of {}x{} cells", universes, width, height));
  if (generations != 1 && generations != 2 && generations != 4 && generations != 8)
    throw std::invalid_argument(fmt::format("generations per launch must be 1, 2, 4 or 8, not {}", generations));
  const Columns c = choose_columns(width);
  if (generations > c.max_generations)
    throw std::invalid_argument(
        fmt::format("a board {} cells wide allows at most {} generations per launch", width, c.max_generations));
  TemporalPlan p;
  p.width = width;
  p.height = height;
  p.words = (width + 63) / 64;
  p.universes = universes;
  p.full_row = c.full_row;
  p.columns = c.columns;
  p.useful = c.useful;
  p.offset = c.offset;
  p.max_generations = c.max_generations;
  p.generations = generations;
  const std::uint64_t units = std::uint64_t{universes} * c.columns;
  // Fill the GPU once: as many strips per column as there are warps to spare, but no
  // strip shorter than K rows (it would compute more halo rows than rows it writes).
  std::uint64_t rows = strip_rows;
  if (rows == 0) {
    const std::uint64_t per_column = std::max<std::uint64_t>(1, resident_warps / units);
    rows = std::max<std::uint64_t>((height + per_column - 1) / per_column, generations);
  }
  p.strip_rows = static_cast<std::uint32_t>(std::min<std::uint64_t>(rows, height));
  p.strips = (height + p.strip_rows - 1) / p.strip_rows;
  const std::uint64_t warps = units * p.strips;
  if (warps >= (std::uint64_t{1} << 31) || std::uint64_t{p.words} * height * universes >= (std::uint64_t{1} << 58))
    throw std::invalid_argument(
        fmt::format("{} universes of {}x{} cells are too many for the bit-packed kernel", universes, width, height));
  p.warps = static_cast<std::uint32_t>(warps);
  return p;
}

}  // namespace streampipe::tools::life::detail
