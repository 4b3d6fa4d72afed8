// SPDX-License-Identifier: Apache-2.0
#pragma once
// The bit-packed Life layout and its step word by word on the host (step_host: the
// reference for the packed layout), and the GPU kernel's own code run on the host
// (advance_tiled_host), so that its indexing is tested without a GPU.
//
// Layout: each row is words_per_row(width) 64-bit words; cell x lives in bit x % 64 of
// word x / 64; bits past the width are always zero. For word k, the west neighbours of its
// 64 cells are the word shifted left by one with the previous word's top bit carried in,
// and the east neighbours the word shifted right with the next word's low bit; at the row
// ends these come from the other end of the row (the torus), and the last word's east
// carry goes to the bit of the last valid cell. The neighbour count of 64 cells is then
// added in bit slices: full adders per row (west + centre + east, and west + east), then
// three 2-bit numbers summed to the ones/twos/fours bits that decide B3/S23.

#include "streampipe/tools/life/board.hpp"
#include "streampipe/tools/life/random.hpp"

#include <cstdint>
#include <vector>

namespace streampipe::tools::life::bitpacked {

[[nodiscard]] SP_LIFE_HD constexpr std::uint32_t words_per_row(std::uint32_t width) noexcept {
  return (width + 63) / 64;
}

// Where word k finds its west and east carries, and which of its bits are cells.
struct WordEdges {
  std::uint32_t kl, kr;  // words holding the west and east carry bits
  unsigned lbit;         // bit of word kl that is the west neighbour of bit 0
  unsigned rpos;         // bit of word k that receives bit 0 of word kr
  std::uint64_t mask;    // valid cells of word k
};

SP_LIFE_HD constexpr WordEdges word_edges(std::uint32_t k, std::uint32_t nw, std::uint32_t width) noexcept {
  const bool first = k == 0, last = k + 1 == nw;
  const unsigned tail = width % 64;
  WordEdges e{};
  e.kl = first ? nw - 1 : k - 1;
  e.kr = last ? 0 : k + 1;
  e.lbit = first ? (width - 1) % 64 : 63;
  e.rpos = last ? (width - 1) % 64 : 63;
  e.mask = (last && tail != 0) ? (std::uint64_t{1} << tail) - 1 : ~std::uint64_t{0};
  return e;
}

struct RowSums {
  std::uint64_t f0, f1;  // west + centre + east per cell, as bits of weight 1 and 2
  std::uint64_t h0, h1;  // west + east
  std::uint64_t centre;
};

SP_LIFE_HD constexpr RowSums row_sums(std::uint64_t centre, std::uint64_t left_word, std::uint64_t right_word,
                                      const WordEdges& e) noexcept {
  const std::uint64_t west = (centre << 1) | ((left_word >> e.lbit) & 1u);
  const std::uint64_t east = (centre >> 1) | ((right_word & 1u) << e.rpos);
  const std::uint64_t we = west ^ east;
  RowSums s{};
  s.h0 = we;
  s.h1 = west & east;
  s.f0 = we ^ centre;
  s.f1 = s.h1 | (centre & we);
  s.centre = centre;
  return s;
}

// The next state of the middle row's 64 cells (unmasked).
SP_LIFE_HD constexpr std::uint64_t next_word(const RowSums& above, const RowSums& mid, const RowSums& below) noexcept {
  const std::uint64_t x0 = above.f0 ^ mid.h0;
  const std::uint64_t s0 = x0 ^ below.f0;                         // weight 1
  const std::uint64_t c0 = (above.f0 & mid.h0) | (below.f0 & x0);  // weight 2
  const std::uint64_t x1 = above.f1 ^ mid.h1;
  const std::uint64_t t0 = x1 ^ below.f1;                         // weight 2
  const std::uint64_t t1 = (above.f1 & mid.h1) | (below.f1 & x1);  // weight 4
  const std::uint64_t u0 = t0 ^ c0;                               // weight 2
  const std::uint64_t u1 = t0 & c0;                               // weight 4
  // Exactly 2 or 3 neighbours: the twos bit set and no fours; then 3, or 2 and alive.
  return u0 & ~(t1 | u1) & (s0 | mid.centre);
}

// Host versions of pack, unpack and one step on the packed layout.
[[nodiscard]] std::vector<std::uint64_t> pack_host(const Board& board);
[[nodiscard]] Board unpack_host(const std::vector<std::uint64_t>& words, std::uint32_t width, std::uint32_t height);
void step_host(const std::vector<std::uint64_t>& in, std::vector<std::uint64_t>& out, std::uint32_t width,
               std::uint32_t height);

// The GPU kernel itself (several generations per launch, warps of 32 lanes; see
// DeviceUniverse) run on the host: the same warp code compiled for a host "warp" whose
// operations act on all 32 lanes, with the plan the GPU would use, so that CPU tests check
// its tiling, shuffles, wrap and masking. Slow: for tests.
struct TiledOptions {
  unsigned generations_per_launch = 0;  // at most this many (1, 2, 4 or 8); 0: the most the board allows
  std::uint32_t strip_rows = 0;         // rows each warp writes; 0: sized for resident_warps as on the GPU
  std::uint32_t resident_warps = 1584;  // warps the GPU holds at once (an H100 at 8 generations per launch)
  bool count_population = false;       // as the kernel does when populations are logged
};
// Advances `universes` packed boards of width x height, one after another in `words`,
// by `generations`. With count_population returns the population of universe u after
// generation g (from 0) at [g * universes + u]. Throws std::invalid_argument for a size
// mismatch, std::logic_error when a launch writes an output word other than once.
std::vector<std::uint64_t> advance_tiled_host(std::vector<std::uint64_t>& words, std::uint32_t width,
                                              std::uint32_t height, std::uint32_t universes,
                                              std::uint64_t generations, const TiledOptions& options = {});

}  // namespace streampipe::tools::life::bitpacked
