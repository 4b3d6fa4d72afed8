// SPDX-License-Identifier: Apache-2.0
// UniverseBatch: many universes of one size stepped by the same launches, each exactly as
// the CPU reference steps it alone (boards and per-generation populations), on odd sizes,
// rows held whole by a warp and rows split into warp columns.

#include <gtest/gtest.h>

#include <tuple>
#include <vector>

#include "streampipe/tools/life/board.hpp"
#include "streampipe/tools/life/batch.hpp"
#include "support/gpu.hpp"

namespace streampipe::tools::life {
namespace {

TEST(LifeBatchGpu, EveryUniverseMatchesTheReferenceAlone) {
  SP_REQUIRE_GPU();
  const Device gpu(0);
  for (const auto& [w, h, n] :
       {std::tuple{97u, 61u, 5u}, {1u, 1u, 3u}, {3u, 2u, 4u}, {2100u, 19u, 3u}, {64u, 64u, 7u}}) {
    UniverseBatch batch(gpu, w, h, n);
    std::vector<Board> want;
    for (std::uint32_t i = 0; i < n; ++i) {
      want.push_back(random_board(w, h, 0.2 + 0.1 * i, 300 + i));
      batch.upload(i, want.back());
    }
    for (std::uint32_t i = 0; i < n; ++i) ASSERT_EQ(batch.download(i), want[i]) << "upload " << i;
    batch.step(3, true);
    batch.step(20, true);  // 8 + 8 + 4: several launches, the log growing
    const auto logs = batch.populations();
    ASSERT_EQ(logs.size(), n);
    for (std::uint32_t i = 0; i < n; ++i) {
      ASSERT_EQ(logs[i].size(), 23u);
      for (std::size_t g = 0; g < 23; ++g) {
        want[i] = advance_host(want[i], 1, 1);
        ASSERT_EQ(logs[i][g], want[i].population()) << w << "x" << h << " universe " << i << " generation " << g + 1;
      }
      EXPECT_EQ(batch.download(i), want[i]) << w << "x" << h << " universe " << i;
    }
    EXPECT_TRUE(batch.populations()[0].empty());
  }
}

TEST(LifeBatchGpu, RandomFillAndTuningAgree) {
  SP_REQUIRE_GPU();
  const Device gpu(0);
  UniverseBatch a(gpu, 300, 77, 4), b(gpu, 300, 77, 4);
  a.fill_random(9, 0.3);
  b.fill_random(9, 0.3);
  for (std::uint32_t i = 0; i < 4; ++i) EXPECT_EQ(a.download(i), random_board(300, 77, 0.3, 9 + i)) << i;
  b.set_generations_per_launch(2);
  b.set_rows_per_thread(5);
  EXPECT_EQ(b.generations_per_launch(), 2u);
  a.step(37);
  b.step(37);
  for (std::uint32_t i = 0; i < 4; ++i) {
    const Board want = advance_host(random_board(300, 77, 0.3, 9 + i), 37, 0);
    EXPECT_EQ(a.download(i), want) << i;
    EXPECT_EQ(b.download(i), want) << i;
  }
}

TEST(LifeBatchGpu, RejectsBadUniversesAndSizes) {
  SP_REQUIRE_GPU();
  const Device gpu(0);
  EXPECT_THROW(UniverseBatch(gpu, 0, 5, 2), std::invalid_argument);
  EXPECT_THROW(UniverseBatch(gpu, 5, 5, 0), std::invalid_argument);
  UniverseBatch batch(gpu, 10, 10, 2);
  EXPECT_THROW(batch.upload(2, Board::empty(10, 10)), std::out_of_range);
  EXPECT_THROW(batch.upload(0, Board::empty(10, 11)), std::invalid_argument);
  EXPECT_THROW((void)batch.download(2), std::out_of_range);
  EXPECT_THROW(batch.set_generations_per_launch(16), std::invalid_argument);
}

}  // namespace
}  // namespace streampipe::tools::life
