// SPDX-License-Identifier: Apache-2.0
// Compile-time contracts of the handles, and the parts that need no device.

#include "streampipe/cuda/device.hpp"
#include "streampipe/cuda/device_buffer.hpp"
#include "streampipe/cuda/event.hpp"
#include "streampipe/cuda/graph.hpp"
#include "streampipe/cuda/graph_cache.hpp"
#include "streampipe/cuda/pinned_buffer.hpp"
#include "streampipe/cuda/pinned_pool.hpp"
#include "streampipe/cuda/stream.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace streampipe {
namespace {

// No implicit null stream: a StreamRef cannot be made from 0 or nullptr.
static_assert(!std::is_constructible_v<StreamRef, std::nullptr_t, int>);
static_assert(!std::is_constructible_v<StreamRef, int, int>);
static_assert(!std::is_default_constructible_v<StreamRef>);
static_assert(!std::is_convertible_v<std::nullptr_t, StreamRef>);
// Owners are move-only; StreamRef is a cheap copyable view.
static_assert(!std::is_copy_constructible_v<Stream> && std::is_nothrow_move_constructible_v<Stream>);
static_assert(!std::is_copy_constructible_v<Event> && std::is_nothrow_move_constructible_v<Event>);
static_assert(!std::is_copy_constructible_v<DeviceBuffer<float>> &&
              std::is_nothrow_move_constructible_v<DeviceBuffer<float>>);
static_assert(!std::is_copy_constructible_v<PinnedBuffer<float>>);
static_assert(!std::is_copy_constructible_v<PinnedBlock> && std::is_nothrow_move_constructible_v<PinnedBlock>);
static_assert(!std::is_copy_constructible_v<GraphExec> && !std::is_copy_constructible_v<Graph>);
static_assert(std::is_trivially_copyable_v<StreamRef>);
static_assert(std::is_nothrow_destructible_v<Stream> && std::is_nothrow_destructible_v<DeviceBuffer<int>>);
// Handles do not convert to each other implicitly.
static_assert(!std::is_convertible_v<Stream, StreamRef>);

TEST(GraphCache, NeedsRoomForOneGraph) {
  EXPECT_THROW(GraphCache<int>(0), std::invalid_argument);
  const GraphCache<int> cache(1);
  EXPECT_EQ(cache.find(7), nullptr);
  EXPECT_EQ(cache.size(), 0u);
}

TEST(Device, CountIsConsistentWithUnavailableReason) {
  const int n = Device::count();
  const auto reason = Device::unavailable_reason();
  EXPECT_EQ(n == 0, reason.has_value());
  if (n == 0) {
    EXPECT_FALSE(reason->empty());
    EXPECT_THROW(Device{0}, std::out_of_range);
  }
  EXPECT_THROW(Device{-1}, std::out_of_range);
  EXPECT_THROW(Device{n}, std::out_of_range);
}

TEST(Device, HardwareQueuesFollowTheEnvironmentWithTheDriversDefault) {
  const char* name = "CUDA_DEVICE_MAX_CONNECTIONS";
  const char* before = std::getenv(name);
  const std::string saved = before ? before : "";
  const std::pair<const char*, int> cases[] = {{"32", 32}, {"8", 8}, {"1", 1}, {"64", 32},
                                               {"0", 8},   {"-3", 8}, {"x", 8}, {"12x", 8}, {"", 8}};
  for (const auto& [value, want] : cases) {
    ASSERT_EQ(::setenv(name, value, 1), 0);
    EXPECT_EQ(hardware_queues(), want) << "'" << value << "'";
  }
  ASSERT_EQ(::unsetenv(name), 0);
  EXPECT_EQ(hardware_queues(), 8);
  if (before) ::setenv(name, saved.c_str(), 1);
}

// The first request wins and the user's own value is kept; no CUDA call is made.
TEST(Device, HardwareQueuesRequestedForTheStreamsFirstAskedFor) {
  const char* name = "CUDA_DEVICE_MAX_CONNECTIONS";
  const char* before = std::getenv(name);
  const std::string saved = before ? before : "";
  const auto fresh = [&](int first, int second) {
    EXPECT_EQ(::unsetenv(name), 0);
    request_hardware_queues(first);
    request_hardware_queues(second);
    return hardware_queues();
  };
  EXPECT_EQ(fresh(4, kMostHardwareQueues), kDriverHardwareQueues);
  EXPECT_EQ(fresh(8, 64), kDriverHardwareQueues);
  EXPECT_EQ(fresh(9, 1), kMostHardwareQueues);
  EXPECT_EQ(fresh(kMostHardwareQueues, 4), kMostHardwareQueues);
  ASSERT_EQ(::setenv(name, "12", 1), 0);
  request_hardware_queues(kMostHardwareQueues);
  EXPECT_EQ(hardware_queues(), 12);
  if (before)
    ::setenv(name, saved.c_str(), 1);
  else
    ::unsetenv(name);
}

// Pageable memory is "not pinned", with or without a device or driver: the query never throws.
TEST(HostMemory, PageableIsNotPinnedWithOrWithoutADevice) {
  int local = 0;
  std::vector<float> heap(16);
  EXPECT_FALSE(is_pinned(nullptr));
  EXPECT_FALSE(is_pinned(&local));
  EXPECT_FALSE(is_pinned(heap.data()));
}

TEST(PinnedPool, RoundsToAllocationSteps) {
  EXPECT_EQ(PinnedPool::rounded_size(1), 64u << 10);
  EXPECT_EQ(PinnedPool::rounded_size(64u << 10), 64u << 10);
  EXPECT_EQ(PinnedPool::rounded_size((64u << 10) + 1), 128u << 10);
  EXPECT_EQ(PinnedPool::rounded_size(16u << 20), 16u << 20);
  EXPECT_EQ(PinnedPool::rounded_size((16u << 20) + 1), 18u << 20);
}

TEST(PinnedPool, EmptyRequestNeedsNoDevice) {
  PinnedPool pool;
  const auto block = pool.acquire(0);
  EXPECT_FALSE(block);
  EXPECT_EQ(pool.stats().misses, 0u);
}

TEST(DeviceBuffer, EmptyAndOverflowNeedNoDevice) {
  DeviceBuffer<float> empty;
  EXPECT_TRUE(empty.empty());
  EXPECT_EQ(empty.data(), nullptr);
  EXPECT_THROW(PinnedBuffer<double>(static_cast<std::size_t>(-1) / 4), std::length_error);
}

}  // namespace
}  // namespace streampipe
