// SPDX-License-Identifier: Apache-2.0
// Batch forming: which items may be batched at all, when the next one fits (item count and
// packed bytes, the last item's padding free), when a batch is full, and that the cursor
// agrees with the slot layout that the batch will get.

#include "batch_fill.hpp"
#include "slot_layout.hpp"

#include <gtest/gtest.h>

#include <random>
#include <vector>

namespace streampipe::pipeline::detail {
namespace {

TEST(BatchFill, OnlySpanItemsThatFitAnEmptyBatchAreBatchable) {
  const BatchLimits off{1, 1 << 20};
  EXPECT_FALSE(batchable(off, 10, false));  // batch_items 1: no batching at all

  const BatchLimits on{4, 1024};
  EXPECT_TRUE(batchable(on, 10, false));
  EXPECT_FALSE(batchable(on, 10, true));  // a produce item's size is known only later
  EXPECT_TRUE(batchable(on, 1024, false));
  EXPECT_FALSE(batchable(on, 1025, false));
}

TEST(BatchFill, AnEmptyBatchTakesAnyBatchableItem) {
  const BatchLimits limits{2, 1000};
  const BatchFill fill(limits);
  EXPECT_EQ(fill.items(), 0u);
  EXPECT_EQ(fill.cursor(), 0u);
  EXPECT_FALSE(fill.full());
  EXPECT_TRUE(fill.fits(1000));
  EXPECT_FALSE(fill.fits(1001));
}

TEST(BatchFill, BytesCountThePaddingBetweenItemsButNotAfterTheLast) {
  BatchFill fill({8, 1024});
  fill.add(100);
  EXPECT_EQ(fill.cursor(), 256u);
  EXPECT_TRUE(fill.fits(768));  // 256 + 768 ends at the limit
  EXPECT_FALSE(fill.fits(769));
  fill.add(700);
  EXPECT_EQ(fill.cursor(), 1024u);  // 956, padded
  EXPECT_FALSE(fill.fits(1));
  EXPECT_EQ(fill.items(), 2u);
  EXPECT_FALSE(fill.full());  // full means the item count; a byte-full batch is sent when the next item misses
}

TEST(BatchFill, FullAtTheItemLimit) {
  BatchFill fill({3, 1 << 20});
  fill.add(1);
  fill.add(1);
  EXPECT_FALSE(fill.full());
  EXPECT_TRUE(fill.fits(1));
  fill.add(1);
  EXPECT_TRUE(fill.full());
  EXPECT_FALSE(fill.fits(1));
  EXPECT_EQ(fill.cursor(), 768u);
}

TEST(BatchFill, ClearStartsANewBatch) {
  BatchFill fill({2, 512});
  fill.add(300);
  fill.add(100);
  ASSERT_TRUE(fill.full());
  fill.clear();
  EXPECT_EQ(fill.items(), 0u);
  EXPECT_EQ(fill.cursor(), 0u);
  EXPECT_TRUE(fill.fits(512));
}

// What fits() admits is what layout_inputs() then lays out within the byte limit.
TEST(BatchFill, AgreesWithTheSlotLayout) {
  std::mt19937 rng(7);
  std::uniform_int_distribution<std::size_t> size(1, 3000);
  const BatchLimits limits{16, 10000};
  for (int round = 0; round < 200; ++round) {
    BatchFill fill(limits);
    std::vector<ItemPlacement> items;
    for (;;) {
      const std::size_t bytes = size(rng);
      if (!fill.fits(bytes)) break;
      fill.add(bytes);
      ItemPlacement p;
      p.in_bytes = bytes;
      p.stage_in = true;
      items.push_back(p);
    }
    ASSERT_FALSE(items.empty());
    ASSERT_LE(items.size(), limits.items);
    const std::size_t staged = layout_inputs(items);
    EXPECT_LE(staged, limits.bytes);
    EXPECT_EQ(staged, items.back().in_offset + items.back().in_bytes);
    EXPECT_EQ(fill.cursor(), align_item(staged));
    EXPECT_EQ(fill.items(), items.size());
  }
}

}  // namespace
}  // namespace streampipe::pipeline::detail
