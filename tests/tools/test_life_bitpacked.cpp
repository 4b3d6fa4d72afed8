// The bit-packed step's word logic (the same functions the GPU kernel runs) on the host,
// against the byte-per-cell reference, exactly, for widths around multiples of 64.

#include "streampipe/tools/life.hpp"
#include "streampipe/tools/life_bitpacked.hpp"

#include <gtest/gtest.h>

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

}  // namespace
}  // namespace streampipe::tools::life
