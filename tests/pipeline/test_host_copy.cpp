// SPDX-License-Identifier: Apache-2.0
#include "streampipe/pipeline/host_copy.hpp"
#include "support/thread_spawner.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <mutex>
#include <random>
#include <thread>
#include <vector>

namespace {

using streampipe::pipeline::copy_piece_bytes;
using streampipe::pipeline::copy_ranges;
using streampipe::pipeline::CopyStore;
using streampipe::pipeline::CopyRange;
using streampipe::pipeline::kParallelCopyMin;
using streampipe::pipeline::PartQueue;

using streampipe::testing::ThreadSpawner;

std::vector<std::uint8_t> random_bytes(std::size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::vector<std::uint8_t> v(n);
  for (auto& b : v) b = static_cast<std::uint8_t>(rng());
  return v;
}

void check_copies(const std::vector<std::size_t>& sizes, int helpers, bool expect_helpers,
                  CopyStore store = CopyStore::cached) {
  std::vector<std::vector<std::uint8_t>> src, dst;
  std::vector<CopyRange> ranges;
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    src.push_back(random_bytes(sizes[i], static_cast<unsigned>(i + 1)));
    dst.emplace_back(sizes[i] + 3, 0xee);  // +3: the copy must not run past its range
  }
  // Odd offsets into the destination: pieces start unaligned.
  for (std::size_t i = 0; i < sizes.size(); ++i) ranges.push_back({dst[i].data() + 1, src[i].data(), sizes[i]});
  ThreadSpawner pool;
  {
    PartQueue parts(helpers, pool.spawner());
    copy_ranges(parts, ranges, store);
  }
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    ASSERT_EQ(dst[i][0], 0xee) << "range " << i;
    ASSERT_TRUE(std::equal(src[i].begin(), src[i].end(), dst[i].begin() + 1)) << "range " << i << " differs";
    ASSERT_EQ(dst[i][sizes[i] + 1], 0xee) << "range " << i;
    ASSERT_EQ(dst[i][sizes[i] + 2], 0xee) << "range " << i;
  }
  if (expect_helpers)
    EXPECT_GT(pool.spawned, 0);
  else
    EXPECT_EQ(pool.spawned, 0);
}

TEST(HostCopy, ManyRangesOfOddSizesSplitOverHelpers) {
  // One item the size of an RGB 1080p image, then a batch of uneven arrays with an empty one.
  check_copies({1920 * 1080 * 3}, 7, true);
  check_copies({1'000'003, 0, 777'777, 65'537, 3, 2'500'001}, 5, true);
  check_copies({1'000'003, 0, 777'777, 65'537, 3, 2'500'001}, 5, true, CopyStore::streaming);
}

TEST(HostCopy, SmallTotalsAndNoHelpersCopyOnTheCaller) {
  check_copies({kParallelCopyMin - 1}, 8, false);
  check_copies({100, 200, 300}, 8, false);
  check_copies({3'000'000, 1'000'001}, 0, false);
  check_copies({3'000'000, 1'000'001}, 0, false, CopyStore::streaming);
  check_copies({}, 4, false);
}

TEST(HostCopy, ConcurrentCallersEachGetTheirOwnRangesCopied) {
  // Four stagers share one queue (as the engine's slots do): pieces of all of them interleave
  // on the helpers, and each call returns only when its own ranges are complete.
  ThreadSpawner pool;
  PartQueue parts(3, pool.spawner());
  constexpr int kCallers = 4;
  std::vector<std::vector<std::uint8_t>> src, dst;
  for (int c = 0; c < kCallers; ++c) {
    src.push_back(random_bytes(1'500'000 + static_cast<std::size_t>(c) * 4099, static_cast<unsigned>(100 + c)));
    dst.emplace_back(src.back().size(), 0);
  }
  std::vector<std::thread> callers;
  std::vector<int> complete_on_return(kCallers, 0);
  for (int c = 0; c < kCallers; ++c)
    callers.emplace_back([&, c] {
      for (int round = 0; round < 5; ++round) {
        std::fill(dst[c].begin(), dst[c].end(), std::uint8_t{0});
        const CopyRange r{dst[c].data(), src[c].data(), src[c].size()};
        copy_ranges(parts, std::span(&r, 1), c % 2 ? CopyStore::streaming : CopyStore::cached);
        complete_on_return[c] += dst[c] == src[c] ? 1 : 0;
      }
    });
  for (auto& t : callers) t.join();
  for (int c = 0; c < kCallers; ++c) EXPECT_EQ(complete_on_return[c], 5) << "caller " << c;
  EXPECT_GT(pool.spawned, 0);
}

TEST(HostCopy, PiecesGiveEveryThreadAboutTwoWithinBounds) {
  // 6.2 MB over 16 threads: ~194 KB pieces, so one image keeps all 16 busy.
  const std::size_t image = 1920 * 1080 * 3;
  const std::size_t p = copy_piece_bytes(image, 16);
  EXPECT_EQ(p % 4096, 0u);
  EXPECT_GE(image / p, 28u);
  EXPECT_LE(image / p, 33u);
  EXPECT_EQ(copy_piece_bytes(1000, 16), std::size_t{128} << 10);          // floor
  EXPECT_EQ(copy_piece_bytes(std::size_t{1} << 34, 4), std::size_t{2} << 20);  // ceiling
  EXPECT_EQ(copy_piece_bytes(std::size_t{1} << 24, 0), std::size_t{2} << 20);   // 0 threads counts as 1
}

}  // namespace
