// SPDX-License-Identifier: Apache-2.0
// EngineOptions::staging_memory as the staging pool sees it: the pinned blocks it lends and
// grows come from the host memory resource given, and go back to it, the pool's own
// PinnedPool untouched. The resource hands out plain memory: no GPU needed.

#include "staging_buffer.hpp"
#include "staging_pool.hpp"

#include "streampipe/cuda/pinned_pool.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <new>

namespace streampipe::pipeline::detail {
namespace {

class CountingHostResource final : public HostMemoryResource {
 public:
  std::map<void*, std::size_t> live;
  int allocations = 0, mismatches = 0;

 private:
  void* do_allocate(std::size_t bytes) override {
    void* p = std::malloc(bytes);
    if (p == nullptr) throw std::bad_alloc();
    const std::lock_guard lock(mutex_);
    live[p] = bytes;
    ++allocations;
    return p;
  }
  void do_deallocate(void* p, std::size_t bytes) noexcept override {
    {
      const std::lock_guard lock(mutex_);
      const auto it = live.find(p);
      if (it == live.end() || it->second != bytes)
        ++mismatches;
      else
        live.erase(it);
    }
    std::free(p);
  }
  std::mutex mutex_;
};

TEST(StagingMemory, PinnedBlocksComeFromTheResourceAndGoBack) {
  CountingHostResource resource;
  const auto misses_before = PinnedPool::global().stats().misses;
  {
    StagingPool pool(true, 1 << 20, 4, [](int) {}, -1, resource);
    const auto a = pool.acquire(1000, 0);
    ASSERT_TRUE(a);
    std::memset(a->data, 1, 1000);
    const auto b = pool.acquire(5000, 1);
    ASSERT_TRUE(b);
    EXPECT_EQ(resource.allocations, 2);
    EXPECT_EQ(resource.live.count(a->data), 1u);
    pool.release(*a);
    const auto c = pool.acquire(100'000, 2);  // grows a returned block: a new allocation, the old one back
    ASSERT_TRUE(c);
    EXPECT_EQ(resource.allocations, 3);
    EXPECT_EQ(resource.live.size(), 2u);
  }
  EXPECT_TRUE(resource.live.empty());
  EXPECT_EQ(resource.mismatches, 0);
  EXPECT_EQ(PinnedPool::global().stats().misses, misses_before);
}

TEST(StagingMemory, GrowingKeepsWhatItWasAskedToKeep) {
  CountingHostResource resource;
  {
    StagingBuffer buffer(true, -1, resource);
    buffer.reserve(16);
    std::memcpy(buffer.data(), "0123456789abcdef", 16);
    buffer.reserve(1 << 16, 16);
    EXPECT_GE(buffer.capacity(), std::size_t{1} << 16);
    EXPECT_EQ(std::memcmp(buffer.data(), "0123456789abcdef", 16), 0);
    EXPECT_EQ(resource.live.size(), 1u);
  }
  EXPECT_TRUE(resource.live.empty());
  EXPECT_EQ(resource.mismatches, 0);
}

}  // namespace
}  // namespace streampipe::pipeline::detail
