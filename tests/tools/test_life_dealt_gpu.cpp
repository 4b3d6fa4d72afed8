// SPDX-License-Identifier: Apache-2.0
// DealtUniverses: universes dealt out to GPUs (GPU 0 named several times stands for several
// devices on a one-GPU host), batched or a stream each, every universe stepping exactly as
// the CPU reference steps it alone.

#include <gtest/gtest.h>

#include <stdexcept>
#include <vector>

#include "streampipe/cuda/device.hpp"
#include "streampipe/tools/life/board.hpp"
#include "streampipe/tools/life/dealt.hpp"
#include "support/gpu.hpp"

namespace streampipe::tools::life {
namespace {

std::vector<Device> all_gpus_or_zero_thrice() {
  const int n = Device::count();
  if (n > 1) {
    std::vector<Device> gpus;
    for (int i = 0; i < n; ++i) gpus.emplace_back(i);
    return gpus;
  }
  return {Device(0), Device(0), Device(0)};
}

TEST(LifeDealtGpu, BothLayoutsMatchTheReferenceUniverseByUniverse) {
  SP_REQUIRE_GPU();
  const auto gpus = all_gpus_or_zero_thrice();
  constexpr std::uint32_t kWidth = 131, kHeight = 45, kCount = 7;
  for (const auto layout : {Layout::batched, Layout::stream_each}) {
    DealtUniverses set(gpus, kWidth, kHeight, kCount, Kernel::bit_packed, layout);
    ASSERT_EQ(set.count(), kCount);
    std::vector<Board> want;
    for (std::uint32_t i = 0; i < kCount; ++i) {
      EXPECT_EQ(set.device_of(i), gpus[i % gpus.size()].index());
      want.push_back(random_board(kWidth, kHeight, 0.15 + 0.05 * i, 40 + i));
      if (i % 2 == 0)
        set.fill_random(i, 40 + i, 0.15 + 0.05 * i);
      else
        set.upload(i, want.back());
    }
    for (std::uint32_t i = 0; i < kCount; ++i) {
      ASSERT_EQ(set.download(i), want[i]) << "universe " << i;
      EXPECT_EQ(set.population(i), want[i].population()) << "universe " << i;
    }
    set.step(5);
    set.step(19);  // more than one launch of 8 generations, the logs growing
    const auto logs = set.populations();
    ASSERT_EQ(logs.size(), kCount);
    for (std::uint32_t i = 0; i < kCount; ++i) {
      ASSERT_EQ(logs[i].size(), 24u) << "universe " << i;
      for (std::size_t g = 0; g < 24; ++g) {
        want[i] = advance_host(want[i], 1, 1);
        ASSERT_EQ(logs[i][g], want[i].population()) << "universe " << i << " generation " << g + 1;
      }
      EXPECT_EQ(set.download(i), want[i]) << "universe " << i;
      EXPECT_EQ(set.population(i), want[i].population()) << "universe " << i;
    }
    EXPECT_TRUE(set.populations()[0].empty());
  }
}

TEST(LifeDealtGpu, FewerUniversesThanGpusAndTheByteKernels) {
  SP_REQUIRE_GPU();
  const auto gpus = all_gpus_or_zero_thrice();
  DealtUniverses one(gpus, 40, 30, 1, Kernel::bit_packed, Layout::batched);
  one.fill_random(0, 7, 0.3);
  one.step(9);
  EXPECT_EQ(one.populations()[0].back(), advance_host(random_board(40, 30, 0.3, 7), 9, 1).population());
  DealtUniverses shared(gpus, 40, 30, 4, Kernel::shared_memory, Layout::stream_each);
  for (std::uint32_t i = 0; i < 4; ++i) shared.fill_random(i, 7 + i, 0.3);
  shared.time_steps(true);
  shared.step(3);
  const auto timings = shared.step_timings();
  ASSERT_EQ(timings.size(), 4u);
  for (const auto& t : timings) EXPECT_EQ(t.size(), 3u);
  for (std::uint32_t i = 0; i < 4; ++i)
    EXPECT_EQ(shared.download(i), advance_host(random_board(40, 30, 0.3, 7 + i), 3, 1)) << i;
}

TEST(LifeDealtGpu, RefusesWhatItCannotDo) {
  SP_REQUIRE_GPU();
  const std::vector<Device> gpu{Device(0)};
  EXPECT_THROW(DealtUniverses({}, 8, 8, 1, Kernel::bit_packed, Layout::batched), std::invalid_argument);
  EXPECT_THROW(DealtUniverses(gpu, 8, 8, 0, Kernel::bit_packed, Layout::batched), std::invalid_argument);
  EXPECT_THROW(DealtUniverses(gpu, 8, 8, 2, Kernel::global_memory, Layout::batched), std::invalid_argument);
  DealtUniverses set(gpu, 8, 8, 2, Kernel::bit_packed, Layout::batched);
  EXPECT_THROW(set.upload(2, Board::empty(8, 8)), std::out_of_range);
  EXPECT_THROW((void)set.download(2), std::out_of_range);
  EXPECT_THROW((void)set.device_of(2), std::out_of_range);
  EXPECT_THROW(set.upload(0, Board::empty(8, 9)), std::invalid_argument);
  EXPECT_THROW(set.time_steps(true), std::logic_error);
  EXPECT_THROW((void)set.step_timings(), std::logic_error);
}

}  // namespace
}  // namespace streampipe::tools::life
