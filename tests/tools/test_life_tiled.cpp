// SPDX-License-Identifier: Apache-2.0
// The bit-packed GPU kernel's own warp code, run on the host (advance_tiled_host), against
// the byte-per-cell reference, exactly: odd and tiny sizes, rows held whole or split into
// warp columns with halos, partial last words in every position, 1-8 generations per
// launch, several universes, thousands of generations; and its plan's halo rule.

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <vector>

#include "temporal.hpp"
#include "streampipe/tools/life/board.hpp"
#include "streampipe/tools/life/bitpacked.hpp"

namespace streampipe::tools::life {
namespace {

using bitpacked::TiledOptions;

std::vector<std::uint64_t> pack_all(const std::vector<Board>& boards) {
  std::vector<std::uint64_t> words;
  for (const Board& b : boards) {
    const auto w = bitpacked::pack_host(b);
    words.insert(words.end(), w.begin(), w.end());
  }
  return words;
}

Board unpack_one(const std::vector<std::uint64_t>& words, std::uint32_t w, std::uint32_t h, std::uint32_t index) {
  const std::size_t n = std::size_t{bitpacked::words_per_row(w)} * h;
  const auto first = words.begin() + static_cast<std::ptrdiff_t>(n * index);
  return bitpacked::unpack_host({first, first + static_cast<std::ptrdiff_t>(n)}, w, h);
}

// Steps `start` by `generations` on the tiled path and checks the board and every
// generation's population against the reference.
void expect_tiled_matches(const Board& start, std::uint64_t generations, const TiledOptions& options) {
  auto words = bitpacked::pack_host(start);
  TiledOptions counted = options;
  counted.count_population = true;
  const auto populations = bitpacked::advance_tiled_host(words, start.width, start.height, 1, generations, counted);
  ASSERT_EQ(populations.size(), generations);
  Board want = start;
  for (std::uint64_t g = 0; g < generations; ++g) {
    want = advance_host(want, 1, 1);
    ASSERT_EQ(populations[g], want.population()) << start.width << "x" << start.height << " generation " << g + 1
                                                 << ", " << options.generations_per_launch << " per launch";
  }
  ASSERT_EQ(bitpacked::unpack_host(words, start.width, start.height), want)
      << start.width << "x" << start.height << " after " << generations << ", " << options.generations_per_launch
      << " per launch, strips of " << options.strip_rows;
}

TEST(LifeTiled, MatchesTheReferenceOnOddAndTinySizes) {
  const std::pair<std::uint32_t, std::uint32_t> sizes[] = {
      {1, 1},     {1, 2},    {2, 1},    {2, 2},    {3, 3},    {1, 3},    {3, 1},   {33, 17},
      {63, 5},    {64, 64},  {65, 9},   {127, 31}, {128, 2},  {129, 40}, {3, 70},  {191, 1},
      {1000, 99}, {2047, 3}, {2048, 4}, {2049, 5}, {2113, 6}, {4096, 3}, {3001, 7}};
  for (const auto& [w, h] : sizes)
    for (const unsigned k : {1u, 2u, 4u, 8u}) {
      const Board start = random_board(w, h, 0.35, w * 31u + h);
      expect_tiled_matches(start, 19, {.generations_per_launch = k});
    }
}

TEST(LifeTiled, PartialLastWordsInHaloLanes) {
  // Rows of 33-92 words whose short last word (1-7 cells) falls where a column's halo
  // would be: the plan must move the columns or take fewer generations per launch.
  for (const std::uint32_t nw : {33u, 34u, 60u, 61u, 62u, 63u, 91u, 92u})
    for (const std::uint32_t tail : {1u, 3u, 7u, 40u}) {
      const std::uint32_t w = 64 * (nw - 1) + tail;
      expect_tiled_matches(random_board(w, 4, 0.4, w), 17, {});
    }
}

TEST(LifeTiled, AnyStripHeightAndGpuSize) {
  const Board start = random_board(200, 101, 0.4, 5);
  for (const std::uint32_t rows : {1u, 2u, 3u, 7u, 8u, 50u, 101u, 500u})
    expect_tiled_matches(start, 21, {.strip_rows = rows});
  for (const std::uint32_t warps : {1u, 5u, 132u * 12u, 100000u})
    expect_tiled_matches(start, 21, {.resident_warps = warps});
}

TEST(LifeTiled, SeveralUniversesStayIndependent) {
  for (const auto& [w, h] : {std::pair{70u, 33u}, {2200u, 9u}, {1u, 1u}}) {
    std::vector<Board> boards;
    for (std::uint32_t i = 0; i < 5; ++i) boards.push_back(random_board(w, h, 0.3 + 0.1 * i, 77 + i));
    auto words = pack_all(boards);
    const auto pops = bitpacked::advance_tiled_host(words, w, h, 5, 13, {.count_population = true});
    ASSERT_EQ(pops.size(), 13u * 5u);
    for (std::uint32_t i = 0; i < 5; ++i) {
      Board b = boards[i];
      for (std::uint32_t g = 0; g < 13; ++g) {
        b = advance_host(b, 1, 1);
        ASSERT_EQ(pops[g * 5 + i], b.population()) << w << "x" << h << " universe " << i << " generation " << g + 1;
      }
      EXPECT_EQ(unpack_one(words, w, h, i), b) << w << "x" << h << " universe " << i;
    }
  }
}

TEST(LifeTiled, ThousandsOfGenerations) {
  // The packed host step (itself checked against the byte reference) is the reference here.
  const auto run = [](const Board& start, std::uint64_t generations, const TiledOptions& options) {
    auto tiled = bitpacked::pack_host(start);
    auto words = tiled;
    std::vector<std::uint64_t> next;
    bitpacked::advance_tiled_host(tiled, start.width, start.height, 1, generations, options);
    for (std::uint64_t g = 0; g < generations; ++g) {
      bitpacked::step_host(words, next, start.width, start.height);
      std::swap(words, next);
    }
    EXPECT_EQ(tiled, words) << start.width << "x" << start.height << " after " << generations;
  };
  run(random_board(130, 97, 0.35, 11), 2003, {.strip_rows = 32});
  Board r = Board::empty(160, 120);  // the R-pentomino, its debris wrapping around the torus
  for (auto [x, y] : {std::pair{81u, 59u}, {82u, 59u}, {80u, 60u}, {81u, 60u}, {81u, 61u}}) r.set(x, y, true);
  run(r, 2000, {.strip_rows = 40});
  run(random_board(2200, 24, 0.3, 12), 400, {});
}

TEST(LifeTiled, PlanHalosHoldTheGenerationsOfALaunch) {
  // Brute force over every column of every width up to 96 words: the halo lanes (lane 0,
  // and the lanes right of the last writing one) hold at least K cells, each word is
  // written once, and K = 8 is possible for every width wider than 32 words.
  for (std::uint32_t width = 1; width <= 64 * 96; width += width < 300 ? 1 : 7) {
    const unsigned k = detail::temporal_generations(width);
    const auto p = detail::plan_temporal(width, 1, 1, 1, k, 1);
    const auto cells = [&](std::uint32_t word) { return word + 1 == p.words && width % 64 != 0 ? width % 64 : 64; };
    std::vector<int> writes(p.words, 0);
    for (std::uint32_t c = 0; c < p.columns; ++c) {
      std::uint32_t last = 0, left = 0, right = 0;
      for (std::uint32_t l = 0; l < 32; ++l) {
        const auto s = detail::lane_setup(p, c, l);
        if (s.useful != 0) {
          ++writes[s.word];
          last = l;
        }
      }
      if (p.full_row != 0) continue;
      left = cells(detail::lane_setup(p, c, 0).word);
      for (std::uint32_t l = last + 1; l < 32; ++l) right += cells(detail::lane_setup(p, c, l).word);
      ASSERT_GE(left, k) << "width " << width << " column " << c;
      ASSERT_GE(right, k) << "width " << width << " column " << c;
    }
    ASSERT_TRUE(std::all_of(writes.begin(), writes.end(), [](int n) { return n == 1; })) << "width " << width;
    if (p.words > 32) {
      EXPECT_EQ(k, 8u) << "width " << width;
    }
  }
}

TEST(LifeTiled, RejectsWhatTheKernelCannotTake) {
  std::vector<std::uint64_t> words(2);
  EXPECT_THROW(bitpacked::advance_tiled_host(words, 64, 3, 1, 1), std::invalid_argument);
  EXPECT_THROW(bitpacked::advance_tiled_host(words, 64, 2, 1, 1, {.generations_per_launch = 3}), std::invalid_argument);
  EXPECT_THROW((void)detail::plan_temporal(64, 2, 1, 100, 5), std::invalid_argument);
  EXPECT_THROW((void)detail::checked_strip_rows(65537), std::invalid_argument);
  EXPECT_EQ(detail::launch_generations(19, 8), 8u);
  EXPECT_EQ(detail::launch_generations(3, 8), 2u);
  EXPECT_EQ(detail::launch_generations(7, 4), 4u);
}

}  // namespace
}  // namespace streampipe::tools::life
