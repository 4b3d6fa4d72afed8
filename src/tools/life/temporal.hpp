// SPDX-License-Identifier: Apache-2.0
#pragma once
// Private to src/tools/life: the plan of the bit-packed Life kernel that advances K generations
// per launch (temporal blocking in registers). Layout as in tools/life/bitpacked.hpp; several
// universes of one size lie one after another (universe u starts at u * words * height).
//
// Work split: one warp per (universe, strip of rows, column of words). In a column, lane l
// holds word (c * useful + offset - 1 + l) mod words; lanes 1..useful write theirs, lanes 0
// and 31 are halo whose wrong outer edge (a shuffle past the warp) moves one cell inwards
// per generation, so a launch may take no more generations than the halo lanes hold cells
// (max_generations). A row of at most 32 words is held whole (full_row: lane l holds word
// l mod words, neighbours wrap inside the warp) and has no halo. Vertically a warp writes
// strip_rows rows and reads K more above and below.

#include <cstdint>

#if defined(__CUDACC__)
#define SP_TEMPORAL_HD __host__ __device__ __forceinline__
#else
#define SP_TEMPORAL_HD inline
#endif

namespace streampipe::tools::life::detail {

inline constexpr unsigned kMaxGenerationsPerLaunch = 8;
inline constexpr unsigned kTemporalBlockThreads = 128;
// Blocks per SM the kernel is compiled for. A generation in flight holds 10 registers per
// lane: K = 8 needs about 150 (12 warps per SM without spilling), K <= 4 fits 128 (16).
constexpr unsigned temporal_min_blocks(unsigned generations) { return generations >= 8 ? 3 : 4; }

struct TemporalPlan {
  std::uint32_t width = 0, height = 0, words = 0, universes = 0;
  std::uint32_t full_row = 0;         // 1: rows of <= 32 words held whole by each warp
  std::uint32_t columns = 0;          // warps across a row
  std::uint32_t useful = 0;           // words each column writes
  std::uint32_t offset = 0;           // column c writes words c * useful + offset ... (mod words)
  std::uint32_t max_generations = 0;  // per launch, as the halo allows
  std::uint32_t generations = 0;      // per launch, this plan's K
  std::uint32_t strip_rows = 0;       // rows each warp writes
  std::uint32_t strips = 0;           // per universe
  std::uint32_t warps = 0;            // universes x strips x columns
};

// Plans a launch of `generations` (1, 2, 4 or 8) generations for `resident_warps` warps on
// the GPU at once (strips are sized to fill it once); strip_rows != 0 overrides the strip.
// Throws std::invalid_argument for an empty board, a bad generation count, more
// generations than the halo allows, or a board too large for 32-bit warp indices.
[[nodiscard]] TemporalPlan plan_temporal(std::uint32_t width, std::uint32_t height, std::uint32_t universes,
                                         std::uint32_t resident_warps, unsigned generations,
                                         std::uint32_t strip_rows = 0);

// The most generations per launch (1, 2, 4 or 8, at most `cap` when cap != 0) a board allows.
[[nodiscard]] unsigned temporal_generations(std::uint32_t width, unsigned cap = 0);

// Tuning values as DeviceUniverse and UniverseBatch take them: returned when valid, else
// std::invalid_argument naming the value.
[[nodiscard]] unsigned checked_generations_per_launch(unsigned generations);  // 0, 1, 2, 4 or 8
[[nodiscard]] std::uint32_t checked_strip_rows(unsigned rows);                // 0 .. 65536

// The generations of the next launch with `remaining` to go: the largest power of two
// <= both `remaining` and `most`, so that n generations take n / 8 launches and a few more.
[[nodiscard]] constexpr unsigned launch_generations(std::uint64_t remaining, unsigned most) noexcept {
  unsigned k = most;
  while (k > 1 && k > remaining) k /= 2;
  return k;
}

// What one lane holds and where its neighbours come from.
struct LaneSetup {
  std::uint32_t word = 0;                         // word index in the row
  std::uint32_t west_src = 0, east_src = 0;       // lanes holding the words west and east of it
  std::uint32_t useful = 0;                       // ~0u: writes and counts its word; 0: does not
  std::uint32_t mask_lo = ~0u, mask_hi = ~0u;     // cells of the word (a partial last word)
  std::uint32_t send_shift = 0, send_shift2 = 0;  // moves its last cell to bit 31 of what it sends east
  std::uint32_t fix_lo = 0, fix_hi = 0;           // where a partial word takes its east carry
};

SP_TEMPORAL_HD LaneSetup lane_setup(const TemporalPlan& p, std::uint32_t column, std::uint32_t lane) {
  LaneSetup s;
  const std::uint32_t nw = p.words;
  if (p.full_row != 0) {
    s.word = lane % nw;
    const std::uint32_t group = lane - s.word;  // lane of word 0 in this copy of the row
    s.west_src = s.word == 0 ? (lane + nw - 1 < 32 ? lane + nw - 1 : 31) : lane - 1;
    s.east_src = s.word + 1 == nw ? group : (lane < 31 ? lane + 1 : 31);
    s.useful = lane < nw ? ~0u : 0u;
  } else {
    s.word = (column * p.useful + p.offset + nw - 1 + lane) % nw;
    s.west_src = lane == 0 ? 0 : lane - 1;
    s.east_src = lane == 31 ? 31 : lane + 1;
    const bool writes = lane >= 1 && lane <= p.useful && column * p.useful + lane - 1 < nw;
    s.useful = writes ? ~0u : 0u;
  }
  const std::uint32_t tail = p.width % 64;
  if (tail != 0 && s.word + 1 == nw) {
    const std::uint64_t mask = (std::uint64_t{1} << tail) - 1;
    const std::uint64_t fix = std::uint64_t{1} << (tail - 1);
    s.mask_lo = static_cast<std::uint32_t>(mask);
    s.mask_hi = static_cast<std::uint32_t>(mask >> 32);
    s.fix_lo = static_cast<std::uint32_t>(fix);
    s.fix_hi = static_cast<std::uint32_t>(fix >> 32);
    s.send_shift = 64 - tail;  // clamped to 32 by the funnel shift, the rest by send_shift2
    s.send_shift2 = 64 - tail > 32 ? 32 - tail : 0;
  }
  return s;
}

}  // namespace streampipe::tools::life::detail
