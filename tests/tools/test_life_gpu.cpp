// SPDX-License-Identifier: Apache-2.0
// Every kernel against the CPU reference, exactly, on random boards of odd sizes (widths
// below, at and around multiples of 64 for the bit-packed kernel), plus the device random
// fill, populations, and several universes on their own streams at once.

#include "streampipe/tools/life/board.hpp"
#include "streampipe/tools/life/bitpacked.hpp"
#include "streampipe/tools/life/universe.hpp"
#include "support/gpu.hpp"

#include <gtest/gtest.h>

#include <bit>
#include <memory>
#include <optional>
#include <vector>

namespace streampipe::tools::life {
namespace {

constexpr Kernel kKernels[] = {Kernel::global_memory, Kernel::shared_memory, Kernel::bit_packed};

struct Size {
  std::uint32_t w, h;
};
constexpr Size kSizes[] = {{33, 17}, {100, 257}, {1000, 999}, {1, 1}, {2, 3}, {63, 5},
                           {64, 64}, {65, 9},    {127, 31},   {128, 2}, {129, 40}, {3, 70}};

TEST(LifeGpu, EveryKernelMatchesTheReferenceExactly) {
  SP_REQUIRE_GPU();
  const Device gpu(0);
  for (const Kernel k : kKernels) {
    for (const auto& [w, h] : kSizes) {
      const Board start = random_board(w, h, 0.35, w * 131u + h);
      DeviceUniverse u(gpu, w, h, k);
      u.upload(start);
      ASSERT_EQ(u.download(), start) << to_string(k) << " upload " << w << "x" << h;
      Board want = start;
      std::uint64_t done = 0;
      for (const std::uint64_t gens : {1u, 1u, 5u, 25u}) {
        u.step(gens);
        want = advance_host(want, gens, 0);
        done += gens;
        ASSERT_EQ(u.download(), want) << to_string(k) << " " << w << "x" << h << " after " << done << " generations";
        ASSERT_EQ(u.population(), want.population());
      }
    }
  }
}

TEST(LifeGpu, BitPackedStripLengthsAllAgree) {
  SP_REQUIRE_GPU();
  const Device gpu(0);
  const Board start = random_board(200, 101, 0.4, 5);
  const Board want = advance_host(start, 19, 0);
  for (unsigned rows : {1u, 3u, 4u, 8u, 16u, 32u, 100u, 101u, 5000u}) {
    DeviceUniverse u(gpu, 200, 101, Kernel::bit_packed);
    u.set_rows_per_thread(rows);
    u.upload(start);
    u.step(19);
    EXPECT_EQ(u.download(), want) << rows << " rows per thread";
  }
  DeviceUniverse u(gpu, 8, 8, Kernel::bit_packed);
  EXPECT_THROW(u.set_rows_per_thread(65537), std::invalid_argument);
  EXPECT_THROW(u.set_generations_per_launch(3), std::invalid_argument);
}

TEST(LifeGpu, BitPackedEveryGenerationsPerLaunchMatchesWithPopulations) {
  // 1, 2, 4 and 8 generations per launch (19 = 8 + 8 + 2 + 1 launches of the default), on
  // rows held whole by a warp and rows split into warp columns with halos (> 32 words),
  // partial last words included; the populations counted inside the launches.
  SP_REQUIRE_GPU();
  const Device gpu(0);
  std::vector<Size> sizes(std::begin(kSizes), std::end(kSizes));
  for (const Size s : {Size{2048, 33}, {2049, 17}, {2113, 9}, {4100, 21}, {64 * 61 + 3, 7}, {64 * 92 + 1, 5}})
    sizes.push_back(s);
  for (const auto& [w, h] : sizes)
    for (const unsigned k : {0u, 1u, 2u, 4u, 8u}) {
      const Board start = random_board(w, h, 0.35, w * 7u + h);
      DeviceUniverse u(gpu, w, h, Kernel::bit_packed);
      u.set_generations_per_launch(k);
      if (k != 0) {
        EXPECT_LE(u.generations_per_launch(), k);
      }
      u.upload(start);
      u.step(19, true);
      const auto log = u.populations();
      ASSERT_EQ(log.size(), 19u);
      Board want = start;
      for (std::size_t g = 0; g < log.size(); ++g) {
        want = advance_host(want, 1, 1);
        ASSERT_EQ(log[g], want.population()) << w << "x" << h << " generation " << g + 1 << ", " << k << " per launch";
      }
      ASSERT_EQ(u.download(), want) << w << "x" << h << ", " << k << " per launch";
    }
}

TEST(LifeGpu, BitPackedThousandsOfGenerationsOnARandomBoard) {
  SP_REQUIRE_GPU();
  const Board start = random_board(1000, 999, 0.3, 42);
  DeviceUniverse u(Device(0), 1000, 999, Kernel::bit_packed);
  EXPECT_EQ(u.generations_per_launch(), 8u);
  u.upload(start);
  u.step(2003);
  // The packed host step (itself checked against the byte reference) is the reference.
  auto words = bitpacked::pack_host(start);
  std::vector<std::uint64_t> next;
  for (int g = 0; g < 2003; ++g) {
    bitpacked::step_host(words, next, 1000, 999);
    std::swap(words, next);
  }
  EXPECT_EQ(u.download(), bitpacked::unpack_host(words, 1000, 999));
}

TEST(LifeGpu, DeviceRandomFillIsTheHostBoard) {
  SP_REQUIRE_GPU();
  const Device gpu(0);
  for (const Kernel k : kKernels) {
    DeviceUniverse u(gpu, 333, 77, k);
    u.fill_random(99, 0.3);
    EXPECT_EQ(u.download(), random_board(333, 77, 0.3, 99)) << to_string(k);
  }
}

TEST(LifeGpu, PopulationLogFollowsEveryGeneration) {
  SP_REQUIRE_GPU();
  const Device gpu(0);
  const Board start = random_board(97, 61, 0.3, 8);
  for (const Kernel k : kKernels) {
    DeviceUniverse u(gpu, 97, 61, k);
    u.upload(start);
    u.step(20, true);
    u.step(1500, true);  // grows the log past its first allocation
    const auto log = u.populations();
    ASSERT_EQ(log.size(), 1520u);
    Board b = start, next;
    for (std::size_t g = 0; g < log.size(); ++g) {
      step_host(b, next, 1);
      std::swap(b, next);
      ASSERT_EQ(log[g], b.population()) << to_string(k) << " generation " << g + 1;
    }
    EXPECT_TRUE(u.populations().empty());
  }
}

TEST(LifeGpu, ManyUniversesOnTheirOwnStreams) {
  SP_REQUIRE_GPU();
  const Device gpu(0);
  std::vector<std::unique_ptr<DeviceUniverse>> universes;
  std::vector<Board> starts;
  for (int i = 0; i < 6; ++i) {
    const std::uint32_t w = 150 + 17 * static_cast<std::uint32_t>(i), h = 90 + 5 * static_cast<std::uint32_t>(i);
    universes.push_back(std::make_unique<DeviceUniverse>(gpu, w, h, kKernels[i % 3]));
    starts.push_back(random_board(w, h, 0.3, 1000 + static_cast<std::uint64_t>(i)));
    universes.back()->upload(starts.back());
  }
  for (int round = 0; round < 10; ++round)
    for (auto& u : universes) u->step(3, true);  // interleaved enqueues on six streams
  for (std::size_t i = 0; i < universes.size(); ++i) {
    const Board want = advance_host(starts[i], 30, 0);
    EXPECT_EQ(universes[i]->download(), want) << "universe " << i;
    const auto log = universes[i]->populations();
    ASSERT_EQ(log.size(), 30u);
    EXPECT_EQ(log.back(), want.population());
  }
}

TEST(LifeGpu, RPentominoSettlesAt1103With116CellsOnEveryKernel) {
  SP_REQUIRE_GPU();
  const Device gpu(0);
  Board start = Board::empty(1024, 1024);
  for (auto [x, y] : {std::pair{513u, 511u}, {514u, 511u}, {512u, 512u}, {513u, 512u}, {513u, 513u}}) start.set(x, y, true);
  // Every generation's population, from the host version of the bit-packed step.
  std::vector<std::uint64_t> want;
  {
    auto words = bitpacked::pack_host(start);
    std::vector<std::uint64_t> next;
    for (int g = 0; g < 1103; ++g) {
      bitpacked::step_host(words, next, 1024, 1024);
      std::swap(words, next);
      std::uint64_t p = 0;
      for (const auto w : words) p += static_cast<std::uint64_t>(std::popcount(w));
      want.push_back(p);
    }
  }
  ASSERT_EQ(want.back(), 116u);
  std::optional<Board> first;
  for (const Kernel k : kKernels) {
    DeviceUniverse u(gpu, 1024, 1024, k);
    u.upload(start);
    u.step(1103, true);
    const auto log = u.populations();
    ASSERT_EQ(log.size(), 1103u);
    EXPECT_EQ(log.back(), 116u) << to_string(k);
    EXPECT_EQ(log, want) << to_string(k);
    const Board b = u.download();
    if (!first)
      first = b;
    else
      EXPECT_EQ(b, *first) << to_string(k);
  }
}

TEST(LifeGpu, RejectsMismatchedBoards) {
  SP_REQUIRE_GPU();
  DeviceUniverse u(Device(0), 10, 10, Kernel::shared_memory);
  EXPECT_THROW(u.upload(Board::empty(10, 11)), std::invalid_argument);
  EXPECT_THROW(DeviceUniverse(Device(0), 0, 10, Kernel::global_memory), std::invalid_argument);
}

}  // namespace
}  // namespace streampipe::tools::life
