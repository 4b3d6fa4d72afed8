// SPDX-License-Identifier: Apache-2.0
// Slot layout and copy coalescing, exactly: the offsets of every item (256-byte aligned,
// padding between items only), the staging a slot needs, the descriptors and extents, and
// which copies move which bytes, with staged, in-place, skipped and empty-output items.

#include "slot_layout.hpp"

#include <gtest/gtest.h>

#include <array>
#include <cstddef>
#include <vector>

namespace streampipe::pipeline::detail {
namespace {

static_assert(align_item(0) == 0);
static_assert(align_item(1) == 256);
static_assert(align_item(256) == 256);
static_assert(align_item(257) == 512);

// Stand-ins for the callers' memory and the slot's staging: only their addresses matter.
struct Memory {
  std::array<std::byte, 64> in_a{}, in_b{}, in_c{}, in_d{};
  std::array<std::byte, 64> out_a{}, out_b{}, out_c{}, out_d{};
  std::array<std::byte, 8192> in_stage{}, out_stage{};
};

ItemPlacement staged(std::size_t in_bytes, std::size_t out_bytes) {
  ItemPlacement p;
  p.in_bytes = in_bytes;
  p.out_bytes = out_bytes;
  p.stage_in = p.stage_out = true;
  return p;
}

ItemPlacement direct(std::size_t in_bytes, const std::byte* in, std::size_t out_bytes, std::byte* out) {
  ItemPlacement p;
  p.in_bytes = in_bytes;
  p.in = in;
  p.out_bytes = out_bytes;
  p.out = out;
  return p;
}

void expect_copy_in(const CopyIn& c, const std::byte* src, std::size_t offset, std::size_t bytes) {
  EXPECT_EQ(c.src, src);
  EXPECT_EQ(c.offset, offset);
  EXPECT_EQ(c.bytes, bytes);
}

void expect_copy_out(const CopyOut& c, std::size_t offset, const std::byte* dst, std::size_t bytes) {
  EXPECT_EQ(c.offset, offset);
  EXPECT_EQ(c.dst, dst);
  EXPECT_EQ(c.bytes, bytes);
}

void expect_descriptor(const ItemDescriptor& d, std::size_t in_offset, std::size_t in_bytes, std::size_t out_offset,
                       std::size_t out_bytes) {
  EXPECT_EQ(d.in_offset, in_offset);
  EXPECT_EQ(d.in_bytes, in_bytes);
  EXPECT_EQ(d.out_offset, out_offset);
  EXPECT_EQ(d.out_bytes, out_bytes);
}

TEST(SlotLayout, InputsSitBackToBackAt256ByteBoundaries) {
  std::vector<ItemPlacement> items{staged(100, 0), staged(256, 0), staged(257, 0), staged(1, 0)};
  EXPECT_EQ(layout_inputs(items), 1025u);  // the last input's end: its padding is not staged
  EXPECT_EQ(items[0].in_offset, 0u);
  EXPECT_EQ(items[1].in_offset, 256u);
  EXPECT_EQ(items[2].in_offset, 512u);
  EXPECT_EQ(items[3].in_offset, 1024u);
}

TEST(SlotLayout, StagingEndsAtTheLastStagedInput) {
  Memory m;
  std::vector<ItemPlacement> items{staged(100, 0), direct(300, m.in_b.data(), 0, nullptr), staged(10, 0),
                                   direct(500, m.in_d.data(), 0, nullptr)};
  EXPECT_EQ(layout_inputs(items), 778u);  // item 2 at 768, 10 bytes; item 3 is read in place
  EXPECT_EQ(items[2].in_offset, 768u);
  EXPECT_EQ(items[3].in_offset, 1024u);

  std::vector<ItemPlacement> in_place{direct(300, m.in_a.data(), 0, nullptr), direct(5, m.in_b.data(), 0, nullptr)};
  EXPECT_EQ(layout_inputs(in_place), 0u);
  EXPECT_EQ(in_place[1].in_offset, 512u);
}

TEST(SlotLayout, AProduceItemNeedsNoStagingUntilItSizesItself) {
  std::vector<ItemPlacement> items{staged(0, 0)};
  items[0].in_offset = 999;
  EXPECT_EQ(layout_inputs(items), 0u);
  EXPECT_EQ(items[0].in_offset, 0u);
}

TEST(SlotLayout, ARunOfStagedItemsIsOneCopyEachWay) {
  Memory m;
  std::vector<ItemPlacement> items{staged(100, 100), staged(300, 300), staged(50, 50)};
  ASSERT_EQ(layout_inputs(items), 818u);
  SlotWork w;
  EXPECT_TRUE(layout_outputs(items, w));
  EXPECT_EQ(w.in_bytes, 1024u);
  EXPECT_EQ(w.out_bytes, 1024u);
  ASSERT_EQ(w.descriptors.size(), 3u);
  expect_descriptor(w.descriptors[0], 0, 100, 0, 100);
  expect_descriptor(w.descriptors[1], 256, 300, 256, 300);
  expect_descriptor(w.descriptors[2], 768, 50, 768, 50);

  plan_copies(items, m.in_stage.data(), m.out_stage.data(), w);
  ASSERT_EQ(w.copies_in.size(), 1u);
  expect_copy_in(w.copies_in[0], m.in_stage.data(), 0, 818);  // padding between items included
  ASSERT_EQ(w.copies_out.size(), 1u);
  expect_copy_out(w.copies_out[0], 0, m.out_stage.data(), 818);
  EXPECT_TRUE(w.stable_addresses);
}

TEST(SlotLayout, ItemsInPlaceAreCopiesOfTheirOwnAndBreakRuns) {
  Memory m;
  std::vector<ItemPlacement> items{staged(100, 10), direct(200, m.in_b.data(), 20, m.out_b.data()), staged(50, 30),
                                   staged(60, 40)};
  items[2].stage_out = false;
  items[2].out = m.out_c.data();
  ASSERT_EQ(layout_inputs(items), 828u);
  SlotWork w;
  EXPECT_TRUE(layout_outputs(items, w));
  EXPECT_EQ(w.in_bytes, 1024u);
  EXPECT_EQ(w.out_bytes, 1024u);
  plan_copies(items, m.in_stage.data(), m.out_stage.data(), w);

  ASSERT_EQ(w.copies_in.size(), 3u);
  expect_copy_in(w.copies_in[0], m.in_stage.data(), 0, 100);
  expect_copy_in(w.copies_in[1], m.in_b.data(), 256, 200);
  expect_copy_in(w.copies_in[2], m.in_stage.data() + 512, 512, 316);  // items 2 and 3: 512 .. 768 + 60

  ASSERT_EQ(w.copies_out.size(), 4u);
  expect_copy_out(w.copies_out[0], 0, m.out_stage.data(), 10);
  expect_copy_out(w.copies_out[1], 256, m.out_b.data(), 20);
  expect_copy_out(w.copies_out[2], 512, m.out_c.data(), 30);
  expect_copy_out(w.copies_out[3], 768, m.out_stage.data() + 768, 40);
  EXPECT_FALSE(w.stable_addresses);
}

TEST(SlotLayout, OutputsAreLaidOutApartFromInputs) {
  std::vector<ItemPlacement> items{staged(1000, 10), staged(10, 1000), staged(300, 300)};
  layout_inputs(items);
  SlotWork w;
  layout_outputs(items, w);
  expect_descriptor(w.descriptors[0], 0, 1000, 0, 10);
  expect_descriptor(w.descriptors[1], 1024, 10, 256, 1000);
  expect_descriptor(w.descriptors[2], 1280, 300, 1280, 300);
  EXPECT_EQ(w.in_bytes, 1792u);
  EXPECT_EQ(w.out_bytes, 1792u);
}

TEST(SlotLayout, EmptyOutputsTakeNoRoomAndKeepARunWhole) {
  Memory m;
  std::vector<ItemPlacement> items{staged(10, 100), staged(10, 0), staged(10, 50)};
  layout_inputs(items);
  SlotWork w;
  EXPECT_TRUE(layout_outputs(items, w));
  expect_descriptor(w.descriptors[0], 0, 10, 0, 100);
  expect_descriptor(w.descriptors[1], 256, 10, 256, 0);
  expect_descriptor(w.descriptors[2], 512, 10, 256, 50);
  EXPECT_EQ(w.out_bytes, 512u);
  plan_copies(items, m.in_stage.data(), m.out_stage.data(), w);
  ASSERT_EQ(w.copies_in.size(), 1u);
  expect_copy_in(w.copies_in[0], m.in_stage.data(), 0, 522);
  ASSERT_EQ(w.copies_out.size(), 1u);
  expect_copy_out(w.copies_out[0], 0, m.out_stage.data(), 306);
  EXPECT_TRUE(w.stable_addresses);
}

TEST(SlotLayout, NoOutputsAtAllMeansNoCopiesOut) {
  Memory m;
  std::vector<ItemPlacement> items{direct(10, m.in_a.data(), 0, nullptr), direct(20, m.in_b.data(), 0, nullptr)};
  layout_inputs(items);
  SlotWork w;
  EXPECT_FALSE(layout_outputs(items, w));
  EXPECT_EQ(w.out_bytes, 0u);
  EXPECT_EQ(w.in_bytes, 512u);
  plan_copies(items, nullptr, nullptr, w);
  ASSERT_EQ(w.copies_in.size(), 2u);
  expect_copy_in(w.copies_in[0], m.in_a.data(), 0, 10);
  expect_copy_in(w.copies_in[1], m.in_b.data(), 256, 20);
  EXPECT_TRUE(w.copies_out.empty());
  EXPECT_FALSE(w.stable_addresses);  // the inputs are the caller's

  std::vector<ItemPlacement> all_staged{staged(10, 0)};
  layout_inputs(all_staged);
  layout_outputs(all_staged, w);
  plan_copies(all_staged, m.in_stage.data(), nullptr, w);
  EXPECT_TRUE(w.copies_out.empty());
  EXPECT_TRUE(w.stable_addresses);
}

TEST(SlotLayout, SkippedItemsGetNoDescriptorNoOutputRoomAndNoCopy) {
  Memory m;
  std::vector<ItemPlacement> items{staged(100, 100), staged(100, 100), staged(100, 100),
                                   direct(20, m.in_d.data(), 20, m.out_d.data())};
  layout_inputs(items);
  items[1].skip = true;
  items[3].skip = true;
  SlotWork w;
  EXPECT_TRUE(layout_outputs(items, w));
  ASSERT_EQ(w.descriptors.size(), 2u);
  expect_descriptor(w.descriptors[0], 0, 100, 0, 100);
  expect_descriptor(w.descriptors[1], 512, 100, 256, 100);  // input stays where it was staged
  EXPECT_EQ(w.in_bytes, 768u);                                // up to the last item not skipped
  EXPECT_EQ(w.out_bytes, 512u);
  plan_copies(items, m.in_stage.data(), m.out_stage.data(), w);
  ASSERT_EQ(w.copies_in.size(), 1u);
  expect_copy_in(w.copies_in[0], m.in_stage.data(), 0, 612);  // over the skipped item's room
  ASSERT_EQ(w.copies_out.size(), 1u);
  expect_copy_out(w.copies_out[0], 0, m.out_stage.data(), 356);
  EXPECT_TRUE(w.stable_addresses);  // the skipped in-place item does not count
}

TEST(SlotLayout, OnlyStagedOutputsNeedTheOutputStaging) {
  Memory m;
  std::vector<ItemPlacement> items{staged(10, 10)};
  items[0].stage_out = false;
  items[0].out = m.out_a.data();
  layout_inputs(items);
  SlotWork w;
  EXPECT_FALSE(layout_outputs(items, w));
  plan_copies(items, m.in_stage.data(), nullptr, w);
  ASSERT_EQ(w.copies_out.size(), 1u);
  expect_copy_out(w.copies_out[0], 0, m.out_a.data(), 10);
  EXPECT_FALSE(w.stable_addresses);
}

TEST(SlotLayout, ALaterPlanReplacesTheEarlierOne) {
  Memory m;
  std::vector<ItemPlacement> three{staged(10, 10), direct(10, m.in_b.data(), 10, m.out_b.data()), staged(10, 10)};
  layout_inputs(three);
  SlotWork w;
  layout_outputs(three, w);
  plan_copies(three, m.in_stage.data(), m.out_stage.data(), w);
  ASSERT_EQ(w.copies_in.size(), 3u);

  std::vector<ItemPlacement> one{staged(20, 20)};
  layout_inputs(one);
  layout_outputs(one, w);
  plan_copies(one, m.in_stage.data(), m.out_stage.data(), w);
  EXPECT_EQ(w.descriptors.size(), 1u);
  ASSERT_EQ(w.copies_in.size(), 1u);
  expect_copy_in(w.copies_in[0], m.in_stage.data(), 0, 20);
  ASSERT_EQ(w.copies_out.size(), 1u);
  EXPECT_EQ(w.in_bytes, 256u);
  EXPECT_TRUE(w.stable_addresses);
}

TEST(SlotWork, ClearResetsEveryFieldAndKeepsCapacity) {
  Operation op;
  SlotWork w;
  w.slot = 3;
  w.op = &op;
  w.copies_in.assign(5, CopyIn{nullptr, 0, 1});
  w.copies_out.assign(5, CopyOut{0, nullptr, 1});
  w.descriptors.assign(5, ItemDescriptor{});
  w.indices.assign(5, 7);
  w.in_bytes = w.out_bytes = 9;
  w.stable_addresses = w.error_in_operation = w.must_wait = w.inputs_fenced = true;
  w.replayed_graph = w.graph_timing = true;
  w.error = std::make_exception_ptr(1);
  w.h2d_start_ms = w.h2d_end_ms = w.compute_end_ms = w.d2h_end_ms = w.enqueue_ms = 1;
  const auto* in_data = w.copies_in.data();
  const auto* index_data = w.indices.data();

  w.clear();
  EXPECT_EQ(w.slot, 0);
  EXPECT_EQ(w.op, nullptr);
  EXPECT_TRUE(w.copies_in.empty() && w.copies_out.empty() && w.descriptors.empty() && w.indices.empty());
  EXPECT_EQ(w.copies_in.data(), in_data);  // no allocation for the next batch
  EXPECT_EQ(w.indices.data(), index_data);
  EXPECT_GE(w.descriptors.capacity(), 5u);
  EXPECT_GE(w.copies_out.capacity(), 5u);
  EXPECT_EQ(w.in_bytes + w.out_bytes, 0u);
  EXPECT_FALSE(w.stable_addresses || w.error_in_operation || w.must_wait || w.inputs_fenced || w.replayed_graph ||
               w.graph_timing);
  EXPECT_FALSE(w.error);
  EXPECT_EQ(w.h2d_start_ms + w.h2d_end_ms + w.compute_end_ms + w.d2h_end_ms + w.enqueue_ms, 0.0);
}

}  // namespace
}  // namespace streampipe::pipeline::detail
