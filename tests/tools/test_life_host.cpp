// SPDX-License-Identifier: Apache-2.0
// The CPU reference against hand-computed cases and known patterns, and its threads.

#include "life_boards.hpp"
#include "streampipe/tools/life/board.hpp"
#include "streampipe/tools/life/image.hpp"
#include "streampipe/tools/life/random.hpp"

#include <gtest/gtest.h>

#include <utility>
#include <vector>

namespace streampipe::tools::life {
namespace {

using test_support::board_from;

Board step(const Board& b) {
  Board out;
  step_host(b, out, 1);
  return out;
}

TEST(LifeHost, BlinkerHasPeriodTwo) {
  const Board horizontal = board_from(5, 5, {{1, 2}, {2, 2}, {3, 2}});
  const Board vertical = board_from(5, 5, {{2, 1}, {2, 2}, {2, 3}});
  EXPECT_EQ(step(horizontal), vertical);
  EXPECT_EQ(step(vertical), horizontal);
}

TEST(LifeHost, BlockIsStill) {
  const Board block = board_from(6, 7, {{2, 3}, {3, 3}, {2, 4}, {3, 4}});
  EXPECT_EQ(step(block), block);
}

TEST(LifeHost, BlinkerAcrossTheWrappedEdge) {
  // Horizontal blinker centred on column 0 of a 6x5 torus: cells (5,2), (0,2), (1,2).
  const Board b = board_from(6, 5, {{5, 2}, {0, 2}, {1, 2}});
  EXPECT_EQ(step(b), board_from(6, 5, {{0, 1}, {0, 2}, {0, 3}}));
  // Vertical blinker across the top edge.
  const Board v = board_from(5, 6, {{2, 5}, {2, 0}, {2, 1}});
  EXPECT_EQ(step(v), board_from(5, 6, {{1, 0}, {2, 0}, {3, 0}}));
}

TEST(LifeHost, GliderMovesOneCellDiagonallyEveryFourGenerations) {
  // .O.
  // ..O
  // OOO   travels towards +x, +y.
  const std::vector<std::pair<std::uint32_t, std::uint32_t>> glider = {{1, 0}, {2, 1}, {0, 2}, {1, 2}, {2, 2}};
  const std::uint32_t w = 11, h = 9;
  Board b = board_from(w, h, glider);
  for (std::uint32_t k = 1; k <= 12; ++k) {  // 48 generations: wraps around both edges
    for (int g = 0; g < 4; ++g) b = step(b);
    std::vector<std::pair<std::uint32_t, std::uint32_t>> moved;
    for (auto [x, y] : glider) moved.emplace_back((x + k) % w, (y + k) % h);
    ASSERT_EQ(b, board_from(w, h, moved)) << "after " << 4 * k << " generations";
    ASSERT_EQ(b.population(), 5u);
  }
}

TEST(LifeHost, HandComputedSmallBoard) {
  // 4x4 torus, cells (0,0), (1,0), (0,1): an L. (1,1) has 3 live neighbours -> born;
  // each of the three has 2 -> survives; every other cell has at most 2 and stays dead
  // (e.g. (3,0) sees (0,0) and (0,1); (3,3) sees (0,0) only).
  const Board b = board_from(4, 4, {{0, 0}, {1, 0}, {0, 1}});
  EXPECT_EQ(step(b), board_from(4, 4, {{0, 0}, {1, 0}, {0, 1}, {1, 1}}));
  // A full 3x3 torus: every cell has 8 live neighbours -> all die.
  Board full = Board::empty(3, 3);
  for (auto& c : full.cells) c = 1;
  EXPECT_EQ(step(full).population(), 0u);
  // 1x1 torus: the single cell is its own 8 neighbours -> dies; an empty one stays empty.
  EXPECT_EQ(step(board_from(1, 1, {{0, 0}})).population(), 0u);
  // 2x1 torus, cell 0 alive. Cell 1 sees cell 0 three times to the left and three times
  // to the right (6: stays dead); cell 0 sees itself above and below (2) and dead cell 1
  // six times (2: survives). The board is still.
  const Board two = board_from(2, 1, {{0, 0}});
  EXPECT_EQ(step(two), two);
}

TEST(LifeHost, ThreadsDoNotChangeTheResult) {
  const Board b = random_board(1000, 999, 0.37, 11);
  Board one, many;
  step_host(b, one, 1);
  step_host(b, many, 7);
  EXPECT_EQ(one, many);
  EXPECT_EQ(advance_host(b, 5, 1), advance_host(b, 5, 0));
}

TEST(LifeHost, RandomBoardFollowsSeedAndDensity) {
  const Board a = random_board(300, 200, 0.25, 3), b = random_board(300, 200, 0.25, 3);
  const Board c = random_board(300, 200, 0.25, 4);
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
  const double fraction = static_cast<double>(a.population()) / static_cast<double>(a.size());
  EXPECT_NEAR(fraction, 0.25, 0.01);
  EXPECT_EQ(random_board(10, 10, 0.0, 1).population(), 0u);
  EXPECT_EQ(random_board(10, 10, 1.0, 1).population(), 100u);
  EXPECT_THROW((void)random_board(10, 10, 1.5, 1), std::invalid_argument);
  EXPECT_THROW((void)random_board(10, 10, -0.1, 1), std::invalid_argument);
}

TEST(LifeHost, RejectsEmptyBoards) {
  EXPECT_THROW((void)Board::empty(0, 5), std::invalid_argument);
  EXPECT_THROW((void)Board::empty(5, 0), std::invalid_argument);
}

TEST(LifeImage, RendersScaledCells) {
  const Board b = board_from(3, 2, {{1, 0}, {2, 1}});
  const io::Image img = render_image(b, 2);
  ASSERT_EQ(img.width, 6u);
  ASSERT_EQ(img.height, 4u);
  ASSERT_EQ(img.channels, 1);
  const std::vector<std::uint8_t> want = {0, 0, 255, 255, 0, 0,  //
                                          0, 0, 255, 255, 0, 0,  //
                                          0, 0, 0, 0, 255, 255,  //
                                          0, 0, 0, 0, 255, 255};
  EXPECT_EQ(img.pixels, want);
  EXPECT_THROW((void)render_image(b, 0), std::invalid_argument);
  EXPECT_EQ(render_text(b, 10, 10), " \u2580\u2584\n");
}

}  // namespace
}  // namespace streampipe::tools::life
