// SPDX-License-Identifier: Apache-2.0
#include "streampipe/cuda/pinned_buffer.hpp"
#include "streampipe/cuda/pinned_pool.hpp"
#include "streampipe/cuda/device_buffer.hpp"
#include "streampipe/cuda/stream.hpp"
#include "support/gpu.hpp"

#include "numa_pinned.hpp"

#include <chrono>
#include <cstdint>
#include <cstring>
#include <cstdlib>
#include <thread>
#include <vector>

namespace streampipe {
namespace {

TEST(PinnedPoolGpu, ReusesReturnedBlocks) {
  SP_REQUIRE_GPU();
  PinnedPool pool;
  void* first = nullptr;
  {
    auto a = pool.acquire(10 << 20);
    ASSERT_TRUE(a);
    EXPECT_EQ(a.size(), 10u << 20);
    EXPECT_GE(a.capacity(), a.size());
    EXPECT_TRUE(is_pinned(a.data()));
    first = a.data();
  }
  auto b = pool.acquire(9 << 20);
  EXPECT_EQ(b.data(), first);
  auto c = pool.acquire(9 << 20);  // the first block is on lease: a new one
  EXPECT_NE(c.data(), first);
  const auto s = pool.stats();
  EXPECT_EQ(s.hits, 1u);
  EXPECT_EQ(s.misses, 2u);
  EXPECT_EQ(s.bytes_cached, 0u);
}

TEST(PinnedPoolGpu, DoesNotHandOutFarLargerBlocks) {
  SP_REQUIRE_GPU();
  PinnedPool pool;
  { auto big = pool.acquire(64 << 20); }
  auto small = pool.acquire(1 << 20);
  EXPECT_EQ(small.capacity(), 1u << 20);
  EXPECT_EQ(pool.stats().hits, 0u);
  EXPECT_EQ(pool.stats().blocks_cached, 1u);
}

TEST(PinnedPoolGpu, RepeatedRunsPayAllocationOnce) {
  SP_REQUIRE_GPU();
  PinnedPool pool;
  const auto run = [&] {
    const auto t0 = std::chrono::steady_clock::now();
    std::vector<PinnedBlock> blocks;
    for (int i = 0; i < 4; ++i) blocks.push_back(pool.acquire(64 << 20));
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  };
  const double cold = run();
  const double warm = run();
  EXPECT_EQ(pool.stats().misses, 4u);
  EXPECT_EQ(pool.stats().hits, 4u);
  EXPECT_LT(warm, cold);
  EXPECT_LT(warm, 1.0) << "acquiring cached blocks should cost microseconds";
}

TEST(PinnedPoolGpu, CapEvictsIdleBlocks) {
  SP_REQUIRE_GPU();
  PinnedPool pool(8 << 20);
  {
    auto a = pool.acquire(6 << 20);
    auto b = pool.acquire(6 << 20);
  }
  EXPECT_LE(pool.stats().bytes_cached, 8u << 20);
  pool.trim();
  EXPECT_EQ(pool.stats().bytes_cached, 0u);
}

TEST(PinnedPoolGpu, ConcurrentAcquireRelease) {
  SP_REQUIRE_GPU();
  PinnedPool pool;
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([&pool, t] {
      for (int i = 0; i < 200; ++i) {
        auto block = pool.acquire(std::size_t(1 + (i + t) % 4) << 20);
        block.data()[0] = std::byte{1};
      }
    });
  for (auto& th : threads) th.join();
  const auto s = pool.stats();
  EXPECT_EQ(s.hits + s.misses, 1600u);
  EXPECT_LE(s.misses, 32u);
  EXPECT_EQ(s.bytes_in_use, 0u);
}

TEST(PinnedPoolGpu, BlocksOutliveThePool) {
  SP_REQUIRE_GPU();
  PinnedBlock survivor;
  {
    PinnedPool pool;
    survivor = pool.acquire(1 << 20);
  }
  survivor.data()[0] = std::byte{7};
  survivor.release();
  EXPECT_FALSE(survivor);
}

TEST(PinnedPoolGpu, CloseFreesIdleBlocksAndThenEveryReturningBlock) {
  SP_REQUIRE_GPU();
  PinnedPool pool;
  auto lent = pool.acquire(1 << 20);  // first: the idle block would otherwise be reused for it
  { auto idle = pool.acquire(2 << 20); }
  EXPECT_EQ(pool.stats().blocks_cached, 1u);
  pool.close();
  EXPECT_EQ(pool.stats().bytes_cached, 0u);
  EXPECT_EQ(pool.stats().bytes_in_use, lent.capacity());
  lent.release();  // freed, not cached
  EXPECT_EQ(pool.stats().bytes_cached, 0u);
  EXPECT_EQ(pool.stats().bytes_in_use, 0u);
  auto again = pool.acquire(1 << 20);  // still usable, uncached
  ASSERT_TRUE(again);
  EXPECT_TRUE(is_pinned(again.data()));
  again.release();
  EXPECT_EQ(pool.stats().bytes_cached, 0u);
  pool.close();  // idempotent
}

// At exit the global pool is closed before the CUDA runtime unloads, so no pinned block is
// left for compute-sanitizer's leak check. A hook registered before the pool's (here, first
// thing in the child) runs after it, and reads the pool's figures without calling CUDA.
TEST(PinnedPoolGpu, GlobalPoolIsClosedAtExit) {
  SP_REQUIRE_GPU();
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        std::atexit([] {
          const auto s = PinnedPool::global().stats();
          std::_Exit(s.bytes_cached == 0 && s.blocks_cached == 0 && s.bytes_in_use == 0 ? 0 : 3);
        });
        { auto block = PinnedPool::global().acquire(3 << 20); }
        if (PinnedPool::global().stats().blocks_cached != 1) std::_Exit(4);  // cached while running
        std::exit(0);
      },
      ::testing::ExitedWithCode(0), "");
}

// Staging bound to a NUMA node (numa_pinned.hpp): the pages are pinned and registered, the
// copy engines take them as they are, and data goes through them both ways unchanged. Node 0
// exists on every host, so this runs the path even where the host has one node.
TEST(PinnedPoolGpu, MemoryBoundToANumaNodeIsPinnedAndCopiesBothWays) {
  SP_REQUIRE_GPU();
  const Device gpu(0);
  EXPECT_GE(gpu.host_numa_node(), -1);
  EXPECT_GE(detail::host_numa_node_count(), 1);
  constexpr std::size_t kBytes = (std::size_t{4} << 20) + 4096;  // not a whole number of large pages
  auto* host = static_cast<std::uint8_t*>(detail::numa_pinned_malloc(kBytes, 0));
  ASSERT_NE(host, nullptr);
  EXPECT_TRUE(is_copy_engine_direct(host));
  for (std::size_t i = 0; i < kBytes; ++i) host[i] = static_cast<std::uint8_t>(i * 7);
  Stream stream(gpu);
  DeviceBuffer<std::uint8_t> device(gpu, kBytes);
  SP_CUDA_CHECK(cudaMemcpyAsync(device.data(), host, kBytes, cudaMemcpyHostToDevice, stream.handle()));
  stream.synchronize();
  std::memset(host, 0, kBytes);
  SP_CUDA_CHECK(cudaMemcpyAsync(host, device.data(), kBytes, cudaMemcpyDeviceToHost, stream.handle()));
  stream.synchronize();
  for (std::size_t i = 0; i < kBytes; ++i) ASSERT_EQ(host[i], static_cast<std::uint8_t>(i * 7)) << i;
  detail::numa_pinned_free(host, kBytes);
  // Through the pool: a block for node 0 (cudaMallocHost's where the host has one node).
  PinnedPool pool;
  PinnedBlock block = pool.acquire(1 << 20, 0);
  EXPECT_TRUE(is_copy_engine_direct(block.data()));
}

}  // namespace
}  // namespace streampipe
