// SPDX-License-Identifier: Apache-2.0
// Device buffers take their memory from the resource they are given, and give it back to it
// on the stream it came from; pinned buffers the same from a host resource. The resources
// here hand out plain host memory, so nothing touches a device: the buffers only call them.

#include "streampipe/cuda/device_buffer.hpp"
#include "streampipe/cuda/memory_resource.hpp"
#include "streampipe/cuda/pinned_buffer.hpp"
#include "support/counting_resources.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <map>
#include <stdexcept>
#include <type_traits>
#include <utility>
#include <vector>

namespace streampipe {
namespace {

static_assert(std::is_trivially_copyable_v<DeviceResourceRef>);
static_assert(!std::is_default_constructible_v<DeviceResourceRef>);  // never null
static_assert(!std::is_copy_constructible_v<StreamOrderedBuffer<int>> &&
              std::is_nothrow_move_constructible_v<StreamOrderedBuffer<int>>);

// Records every allocation; the memory is the host's.
class HostBackedResource final : public DeviceMemoryResource {
 public:
  std::map<void*, std::pair<std::size_t, cudaStream_t>> live;
  int allocations = 0, deallocations = 0;
  bool mismatch = false;  // a deallocation that did not match its allocation

 private:
  void* do_allocate(StreamRef stream, std::size_t bytes) override {
    void* p = std::malloc(bytes);
    if (p == nullptr) throw std::bad_alloc();
    live[p] = {bytes, stream.handle()};
    ++allocations;
    return p;
  }
  void do_deallocate(StreamRef stream, void* p, std::size_t bytes) noexcept override {
    const auto it = live.find(p);
    if (it == live.end() || it->second != std::pair{bytes, stream.handle()}) mismatch = true;
    if (it != live.end()) live.erase(it);
    ++deallocations;
    std::free(p);
  }
};

// A stream handle that is never used as one: the resource only compares it.
StreamRef fake_stream(std::uintptr_t id) { return StreamRef(reinterpret_cast<cudaStream_t>(id), 0); }

TEST(MemoryResource, StreamOrderedBufferAllocatesAndFreesThroughIt) {
  HostBackedResource mr;
  {
    StreamOrderedBuffer<double> a(fake_stream(1), 100, mr);
    EXPECT_EQ(mr.allocations, 1);
    EXPECT_EQ(mr.live.at(a.data()).first, 100 * sizeof(double));
    EXPECT_TRUE(a.resource() == DeviceResourceRef(mr));
    StreamOrderedBuffer<double> b(std::move(a));  // the move carries the resource
    EXPECT_EQ(a.data(), nullptr);
    a.reset();
    EXPECT_EQ(mr.deallocations, 0);
  }
  EXPECT_EQ(mr.deallocations, 1);
  EXPECT_TRUE(mr.live.empty());
  EXPECT_FALSE(mr.mismatch);
}

TEST(MemoryResource, DeviceBufferAllocatesAndFreesThroughIt) {
  HostBackedResource mr;
  DeviceBuffer<int> a(10, fake_stream(2), mr);
  EXPECT_EQ(a.size(), 10u);
  DeviceBuffer<int> b(20, fake_stream(3), mr);
  a = std::move(b);  // frees a's first allocation, takes b's
  EXPECT_EQ(mr.deallocations, 1);
  EXPECT_EQ(mr.live.at(a.data()), (std::pair{20 * sizeof(int), reinterpret_cast<cudaStream_t>(3)}));
  a.reset();
  EXPECT_EQ(mr.deallocations, 2);
  EXPECT_TRUE(mr.live.empty());
  EXPECT_FALSE(mr.mismatch);
}

TEST(MemoryResource, EmptyBufferAsksForNothing) {
  HostBackedResource mr;
  { const StreamOrderedBuffer<int> empty(fake_stream(1), 0, mr); }
  { const DeviceBuffer<int> empty(0, fake_stream(1), mr); }
  EXPECT_EQ(mr.allocations, 0);
  EXPECT_EQ(mr.deallocations, 0);
}

TEST(MemoryResource, OverflowIsCheckedBeforeTheResourceIsAsked) {
  HostBackedResource mr;
  EXPECT_THROW((DeviceBuffer<double>(static_cast<std::size_t>(-1), fake_stream(1), mr)), std::length_error);
  EXPECT_EQ(mr.allocations, 0);
}

// Counts what a pinned buffer asks of it; the memory is plain malloc's.
class MallocHostResource final : public HostMemoryResource {
 public:
  testing::AllocationLedger ledger;

 private:
  void* do_allocate(std::size_t bytes) override {
    void* p = std::malloc(bytes);
    if (p == nullptr) throw std::bad_alloc();
    ledger.allocated(p, bytes);
    return p;
  }
  void do_deallocate(void* p, std::size_t bytes) noexcept override {
    ledger.deallocated(p, bytes);
    std::free(p);
  }
};

TEST(MemoryResource, PinnedBufferAllocatesAndFreesThroughAHostResource) {
  MallocHostResource mr;
  {
    PinnedBuffer<float> a(16, mr);
    PinnedBuffer<float> b(4, mr);
    EXPECT_EQ(mr.ledger.counts().sizes, (std::vector<std::size_t>{16 * sizeof(float), 4 * sizeof(float)}));
    a[15] = 1.0f;
    b = std::move(a);  // gives b's first memory back, takes a's with its resource
    EXPECT_EQ(a.data(), nullptr);
    EXPECT_EQ(b.size(), 16u);
    EXPECT_EQ(mr.ledger.counts().deallocations, 1);
    const PinnedBuffer<float> empty(0, mr);  // asks for nothing
    EXPECT_EQ(mr.ledger.counts().allocations, 2);
  }
  const auto c = mr.ledger.counts();
  EXPECT_EQ(c.deallocations, 2);
  EXPECT_EQ(c.live_bytes, 0u);
  EXPECT_EQ(c.mismatches, 0);
  EXPECT_THROW((PinnedBuffer<double>(static_cast<std::size_t>(-1), mr)), std::length_error);
  EXPECT_EQ(mr.ledger.counts().allocations, 2);
}

TEST(MemoryResource, BuiltInResourcesAreDistinctAndStable) {
  EXPECT_TRUE(cuda_async_resource() == cuda_async_resource());
  EXPECT_FALSE(cuda_async_resource() == cuda_malloc_resource());
}

}  // namespace
}  // namespace streampipe
