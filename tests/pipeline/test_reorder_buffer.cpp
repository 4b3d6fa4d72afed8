// SPDX-License-Identifier: Apache-2.0
// In-order delivery: values pushed in any order leave in index order as soon as the gap
// before them closes; a repeated or delivered index is refused and changes nothing; the
// ring grows while wrapped without losing or reordering anything.

#include "reorder_buffer.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <numeric>
#include <random>
#include <stdexcept>
#include <vector>

namespace streampipe::pipeline::detail {
namespace {

// Pushes each index with itself as the value, in the order given.
void push_each(ReorderBuffer<int>& buffer, std::initializer_list<int> indices) {
  for (const int i : indices) buffer.push(static_cast<std::size_t>(i), i);
}

std::vector<int> pop_all(ReorderBuffer<int>& buffer) {
  std::vector<int> out;
  while (auto v = buffer.pop()) out.push_back(*v);
  return out;
}

// What leaves once `index` (with itself as the value) arrives.
std::vector<int> released_by(ReorderBuffer<int>& buffer, int index) {
  push_each(buffer, {index});
  return pop_all(buffer);
}

TEST(ReorderBuffer, InOrderValuesLeaveAtOnce) {
  ReorderBuffer<int> buffer;
  EXPECT_FALSE(buffer.pop().has_value());
  for (int i = 0; i < 40; ++i) {
    buffer.push(static_cast<std::size_t>(i), i * 10);
    EXPECT_EQ(pop_all(buffer), std::vector<int>{i * 10});
  }
  EXPECT_EQ(buffer.next(), 40u);
  EXPECT_EQ(buffer.held(), 0u);
}

TEST(ReorderBuffer, LaterValuesWaitForTheGap) {
  ReorderBuffer<int> buffer;
  push_each(buffer, {2, 1});
  EXPECT_TRUE(pop_all(buffer).empty());
  EXPECT_EQ(buffer.held(), 2u);
  EXPECT_EQ(released_by(buffer, 0), (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(buffer.next(), 3u);
  EXPECT_EQ(buffer.held(), 0u);
}

TEST(ReorderBuffer, EachGapHoldsOnlyWhatFollowsIt) {
  ReorderBuffer<int> buffer;
  push_each(buffer, {0, 2, 3, 5});
  EXPECT_EQ(pop_all(buffer), std::vector<int>{0});
  EXPECT_EQ(released_by(buffer, 1), (std::vector<int>{1, 2, 3}));
  EXPECT_EQ(buffer.next(), 4u);
  EXPECT_EQ(buffer.held(), 1u);
  EXPECT_EQ(released_by(buffer, 4), (std::vector<int>{4, 5}));
}

TEST(ReorderBuffer, ARepeatedIndexIsRefusedAndChangesNothing) {
  ReorderBuffer<int> buffer;
  push_each(buffer, {0, 2});
  EXPECT_THROW(buffer.push(2, 99), std::logic_error);  // waiting
  EXPECT_EQ(pop_all(buffer), std::vector<int>{0});
  EXPECT_THROW(buffer.push(0, 99), std::logic_error);  // already delivered
  EXPECT_EQ(buffer.held(), 1u);
  EXPECT_EQ(buffer.next(), 1u);
  EXPECT_EQ(released_by(buffer, 1), (std::vector<int>{1, 2}));
}

TEST(ReorderBuffer, AnIndexBeyondAnyMemoryIsRefused) {
  ReorderBuffer<int> buffer;
  EXPECT_THROW(buffer.push(SIZE_MAX, 1), std::length_error);
  EXPECT_EQ(released_by(buffer, 0), std::vector<int>{0});
}

TEST(ReorderBuffer, MoveOnlyValues) {
  ReorderBuffer<std::unique_ptr<int>> buffer;
  buffer.push(1, std::make_unique<int>(1));
  buffer.push(0, std::make_unique<int>(0));
  auto first = buffer.pop();
  ASSERT_TRUE(first.has_value());
  EXPECT_EQ(**first, 0);
  auto second = buffer.pop();
  ASSERT_TRUE(second.has_value());
  EXPECT_EQ(**second, 1);
  EXPECT_FALSE(buffer.pop().has_value());
}

TEST(ReorderBuffer, GrowsWhileWrappedWithoutReordering) {
  ReorderBuffer<int> buffer;
  for (int i = 0; i < 10; ++i) buffer.push(static_cast<std::size_t>(i), i);
  ASSERT_EQ(pop_all(buffer).size(), 10u);  // the ring's start is now inside it
  push_each(buffer, {12, 11});
  buffer.push(17, 17);  // 7 ahead: past the end of the ring of 16, at its front
  buffer.push(40, 40);  // 30 ahead: grows while the waiting values wrap around
  for (int i = 39; i >= 13; --i)
    if (i != 17) buffer.push(static_cast<std::size_t>(i), i);
  EXPECT_TRUE(pop_all(buffer).empty());
  buffer.push(10, 10);
  std::vector<int> want(31);
  std::iota(want.begin(), want.end(), 10);
  EXPECT_EQ(pop_all(buffer), want);
}

// Indices shuffled within a sliding window, as lanes finishing out of order deliver them.
TEST(ReorderBuffer, ShuffledWindowsComeOutInOrder) {
  std::mt19937 rng(11);
  ReorderBuffer<int> buffer;
  std::vector<int> out;
  constexpr int kCount = 5000;
  std::vector<int> order(kCount);
  std::iota(order.begin(), order.end(), 0);
  for (int start = 0; start < kCount; start += 37)
    std::shuffle(order.begin() + start, order.begin() + std::min(start + 37, kCount), rng);
  for (int i : order) {
    buffer.push(static_cast<std::size_t>(i), i);
    while (auto v = buffer.pop()) out.push_back(*v);
    ASSERT_LE(buffer.held(), 37u);
  }
  ASSERT_EQ(out.size(), static_cast<std::size_t>(kCount));
  for (int i = 0; i < kCount; ++i) ASSERT_EQ(out[static_cast<std::size_t>(i)], i);
}

}  // namespace
}  // namespace streampipe::pipeline::detail
