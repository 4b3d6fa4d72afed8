// SPDX-License-Identifier: Apache-2.0
// The bit-packed step's word logic (the same functions the GPU kernel runs) on the host,
// against the byte-per-cell reference, exactly, for widths around multiples of 64.

#include "streampipe/tools/life/board.hpp"
#include "streampipe/tools/life/bitpacked.hpp"

#include <gtest/gtest.h>

#include <bit>

namespace streampipe::tools::life {
namespace {

TEST(LifeBitPacked, PackUnpackRoundTrip) {
  for (std::uint32_t w : {1u, 63u, 64u, 65u, 130u}) {
    const Board b = random_board(w, 7, 0.5, w);
    const auto words = bitpacked::pack_host(b);
    ASSERT_EQ(words.size(), std::size_t{bitpacked::words_per_row(w)} * 7);
    EXPECT_EQ(bitpacked::unpack_host(words, w, 7), b);
  }
}

TEST(LifeBitPacked, MatchesTheReferenceOnOddSizes) {
  const std::pair<std::uint32_t, std::uint32_t> sizes[] = {{33, 17}, {100, 257}, {1, 1},  {2, 3},   {63, 5},
                                                           {64, 64}, {65, 9},    {127, 31}, {128, 2}, {129, 40},
                                                           {3, 70},  {191, 1},   {1000, 99}};
  for (const auto& [w, h] : sizes) {
    for (const double density : {0.1, 0.35, 0.8}) {
      Board want = random_board(w, h, density, w * 7u + h);
      auto words = bitpacked::pack_host(want);
      std::vector<std::uint64_t> next;
      for (int g = 1; g <= 12; ++g) {
        bitpacked::step_host(words, next, w, h);
        std::swap(words, next);
        want = advance_host(want, 1, 1);
        ASSERT_EQ(bitpacked::unpack_host(words, w, h), want) << w << "x" << h << " density " << density
                                                             << " generation " << g;
        // Bits past the width stay zero (the population count relies on it).
        const std::uint64_t mask = bitpacked::word_edges(bitpacked::words_per_row(w) - 1, bitpacked::words_per_row(w), w).mask;
        for (std::uint32_t y = 0; y < h; ++y)
          ASSERT_EQ(words[std::size_t{y} * bitpacked::words_per_row(w) + bitpacked::words_per_row(w) - 1] & ~mask, 0u);
      }
    }
  }
}

TEST(LifeBitPacked, GliderCrossesWordBoundariesAndTheWrap) {
  // A glider on a 130-wide board crosses two word boundaries and the torus edge.
  Board b = Board::empty(130, 6);
  for (auto [x, y] : {std::pair{61u, 0u}, {62u, 1u}, {60u, 2u}, {61u, 2u}, {62u, 2u}}) b.set(x, y, true);
  auto words = bitpacked::pack_host(b);
  std::vector<std::uint64_t> next;
  Board want = b;
  for (int g = 0; g < 300; ++g) {
    bitpacked::step_host(words, next, 130, 6);
    std::swap(words, next);
    want = advance_host(want, 1, 1);
  }
  EXPECT_EQ(bitpacked::unpack_host(words, 130, 6), want);
  EXPECT_EQ(want.population(), 5u);
}

TEST(LifeBitPacked, RPentominoStabilizesAtGeneration1103WithPopulation116) {
  // The known history (LifeWiki): the R-pentomino settles at generation 1103 with 116 cells,
  // six of them in escaping gliders. A 1024^2 torus is wide enough that no glider wraps
  // around before generation 1200.
  const std::uint32_t n = 1024;
  Board b = Board::empty(n, n);
  for (auto [x, y] : {std::pair{513u, 511u}, {514u, 511u}, {512u, 512u}, {513u, 512u}, {513u, 513u}}) b.set(x, y, true);
  auto words = bitpacked::pack_host(b);
  std::vector<std::uint64_t> next;
  const auto population = [&] {
    std::uint64_t p = 0;
    for (const auto w : words) p += static_cast<std::uint64_t>(std::popcount(w));
    return p;
  };
  for (int g = 1; g <= 1200; ++g) {
    bitpacked::step_host(words, next, n, n);
    std::swap(words, next);
    if (g == 1103) {
      EXPECT_EQ(population(), 116u);
    }
  }
  EXPECT_EQ(population(), 116u) << "still 116 at generation 1200";
}

}  // namespace
}  // namespace streampipe::tools::life
