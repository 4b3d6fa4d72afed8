// SPDX-License-Identifier: Apache-2.0
// How long a Life run's chunks are (src/tools/life/chunk_rule.hpp): the first short, to
// measure; the next sized from the last one's time per generation; every one cut to the
// generations left, to the next board the caller sees, and to the populations the run holds.
#include "chunk_rule.hpp"

#include <gtest/gtest.h>

#include <limits>
#include <span>
#include <vector>

namespace streampipe::tools::life::detail {
namespace {

constexpr ChunkRule kRule{.first = 16, .target_ms = 500, .most = 65536};

TEST(LifeChunkRule, TheFirstChunkIsShortToMeasure) {
  EXPECT_EQ(next_chunk(kRule, {}, 100000, 0), 16u);
  EXPECT_EQ(next_chunk(kRule, {}, 10, 0), 10u);    // fewer left
  EXPECT_EQ(next_chunk(kRule, {}, 100000, 5), 5u);  // a board is due sooner
  EXPECT_EQ(next_chunk({.first = 1, .target_ms = 100, .most = 65536}, {}, 100000, 0), 1u);
}

TEST(LifeChunkRule, TheNextChunkLastsAboutTheTarget) {
  // 16 generations in 8 ms: 0.5 ms a generation, so 1000 fill 500 ms.
  EXPECT_EQ(next_chunk(kRule, {16, 8.0}, 100000, 0), 1000u);
  // Slower chunks shrink the next one, quicker ones grow it, without doubling steps.
  EXPECT_EQ(next_chunk(kRule, {1000, 1000.0}, 100000, 0), 500u);
  EXPECT_EQ(next_chunk(kRule, {1000, 50.0}, 100000, 0), 10000u);
  // A generation slower than the target still steps, one at a time.
  EXPECT_EQ(next_chunk(kRule, {1, 2000.0}, 100000, 0), 1u);
  // Rounded down: 500 / 0.3 is 1666.7.
  EXPECT_EQ(next_chunk(kRule, {10, 3.0}, 100000, 0), 1666u);
}

TEST(LifeChunkRule, EveryChunkIsCutToTheRunsLimits) {
  const ChunkTime quick{16, 0.016};  // 1 us a generation: 500,000 would fill the target
  EXPECT_EQ(next_chunk(kRule, quick, 1000000, 0), 65536u);  // the populations held
  EXPECT_EQ(next_chunk(kRule, quick, 1234, 0), 1234u);      // the generations left
  EXPECT_EQ(next_chunk(kRule, quick, 1000000, 100), 100u);  // the next snapshot
  EXPECT_EQ(next_chunk(kRule, quick, 1000000, 1), 1u);      // --live: every generation
  EXPECT_EQ(next_chunk(kRule, quick, 0, 0), 0u);            // nothing left
  // A timed run steps one generation per item whatever it measured.
  EXPECT_EQ(next_chunk({.first = 1, .target_ms = 500, .most = 1}, quick, 1000, 0), 1u);
}

TEST(LifeChunkRule, AChunkTooQuickToTimeTakesTheMost) {
  EXPECT_EQ(next_chunk(kRule, {16, 0.0}, 1000000, 0), 65536u);
  EXPECT_EQ(next_chunk(kRule, {16, 1e-300}, 1000000, 0), 65536u);  // beyond any uint64
  EXPECT_EQ(next_chunk(kRule, {16, std::numeric_limits<double>::quiet_NaN()}, 1000000, 0), 65536u);
  EXPECT_EQ(next_chunk(kRule, {16, std::numeric_limits<double>::infinity()}, 1000000, 0), 1u);  // never ends: 1
  EXPECT_EQ(next_chunk({.first = 16, .target_ms = 500, .most = 0}, {16, 1.0}, 100, 0), 1u);  // at least one
}

pipeline::ItemResult item_on(int lane, double compute_ms, std::size_t batch_size) {
  pipeline::ItemResult r;
  r.lane = lane;
  r.timing.compute_ms = compute_ms;
  r.batch_size = batch_size;
  return r;
}

// What a chunk stepped: its lanes' batches one after another, its lanes side by side.
TEST(LifeChunkRule, AChunkSteppedAsLongAsItsLongestLane) {
  // One batch of 4 universes on lane 0 (each item reports the batch's 8 ms), two single
  // universes one after another on lane 3, an item that never ran.
  const std::vector<pipeline::ItemResult> items{item_on(0, 8.0, 4), item_on(0, 8.0, 4), item_on(3, 5.0, 1),
                                                item_on(0, 8.0, 4), item_on(0, 8.0, 4), item_on(3, 4.5, 1),
                                                item_on(-1, 0.0, 1)};
  EXPECT_DOUBLE_EQ(stepping_ms(items), 9.5);
  EXPECT_DOUBLE_EQ(stepping_ms(std::vector<pipeline::ItemResult>(4, item_on(0, 8.0, 4))), 8.0);  // the batch
  EXPECT_DOUBLE_EQ(stepping_ms(std::span(items).first(3)), 5.0);  // half the batch: 4 ms; lane 3: 5 ms
  // Lanes that timed nothing: the caller falls back on its own clock.
  EXPECT_EQ(stepping_ms(std::vector<pipeline::ItemResult>{item_on(1, 0.0, 1), item_on(-1, 3.0, 1)}), 0.0);
  EXPECT_EQ(stepping_ms({}), 0.0);
}

TEST(LifeChunkRule, ThePopulationsHeldStayWithinABudget) {
  EXPECT_EQ(most_generations(1), 65536u);
  EXPECT_EQ(most_generations(64), 65536u);
  EXPECT_EQ(most_generations(128), 32768u);
  EXPECT_EQ(most_generations(1024), 4096u);
  EXPECT_EQ(most_generations(0), 65536u);
  EXPECT_GE(most_generations(std::numeric_limits<std::size_t>::max()), 1u);
}

}  // namespace
}  // namespace streampipe::tools::life::detail
