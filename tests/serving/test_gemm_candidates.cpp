// SPDX-License-Identifier: Apache-2.0
// The GEMM algorithm search's candidate planning (host only): the heuristic's answers
// first and in order, split-K variants only where an algorithm supports fp32 reduction and
// the GPU is not already full, smaller tiles, kernel options (custom option x cluster
// shape) of the first tiles, no duplicates, the cap, and the names.

#include "gemm_candidates.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>

namespace streampipe::serving::detail {
namespace {

constexpr std::uint32_t kTile64x64 = 15, kTile64x128 = 17, kTile128x64 = 18, kTile128x128 = 20, kTile128x256 = 23,
                        kTile256x128 = 24;

AlgoConfig config(int id, std::uint32_t tile, std::uint32_t stages, int split = 1,
                  std::uint32_t reduction = kReductionNone) {
  AlgoConfig c;
  c.id = id;
  c.tile = tile;
  c.stages = stages;
  c.split_k = split;
  c.reduction = reduction;
  return c;
}

struct Fixture {
  std::vector<HeuristicEntry> heuristic = {
      {config(31, kTile128x256, 16), 0.24f},
      {config(31, kTile128x256, 16, 4, kReductionComputeType), 0.97f},
      {config(31, kTile128x128, 16), 0.48f},
      {config(5, kTile64x128, 0, 2, kReductionInplace), 1.0f},  // bf16 partial sums: never a candidate
      {config(5, kTile64x128, 0), 0.5f},
  };
  std::map<int, int> caps_calls;
  std::function<AlgoCaps(int)> caps = [this](int id) {
    ++caps_calls[id];
    AlgoCaps c;
    if (id == 31) {
      c.split_k = true;
      c.reduction_mask = kReductionInplace | kReductionComputeType | kReductionOutputType;
      c.tiles = {kTile64x64, kTile64x128, kTile128x64, kTile128x128, kTile128x256, kTile256x128};
    }
    return c;  // id 5: no split-K
  };
};

bool contains(const std::vector<Candidate>& v, const AlgoConfig& c) {
  return std::any_of(v.begin(), v.end(), [&](const Candidate& x) { return x.config == c; });
}

TEST(GemmCandidates, HeuristicAnswersComeFirstInOrderWithTheirRanks) {
  Fixture f;
  const auto plan = plan_candidates(f.heuristic, f.caps);
  ASSERT_GE(plan.size(), 4u);
  EXPECT_EQ(plan[0].config, f.heuristic[0].config);
  EXPECT_EQ(plan[0].heuristic_rank, 0);
  EXPECT_EQ(plan[1].config, f.heuristic[1].config);
  EXPECT_EQ(plan[1].heuristic_rank, 1);
  EXPECT_EQ(plan[2].heuristic_rank, 2);
  EXPECT_EQ(plan[3].config, f.heuristic[4].config);  // rank 3 reduces in bf16: skipped
  EXPECT_EQ(plan[3].heuristic_rank, 4);
  for (std::size_t i = 4; i < plan.size(); ++i) EXPECT_EQ(plan[i].heuristic_rank, -1) << i;
}

TEST(GemmCandidates, EveryCandidateAccumulatesInFp32AndNoneRepeats) {
  Fixture f;
  const auto plan = plan_candidates(f.heuristic, f.caps);
  for (std::size_t i = 0; i < plan.size(); ++i) {
    EXPECT_TRUE(accumulates_in_fp32(plan[i].config)) << i;
    if (plan[i].config.split_k > 1) {
      EXPECT_EQ(plan[i].config.reduction, kReductionComputeType) << i;
    }
    for (std::size_t j = 0; j < i; ++j) EXPECT_FALSE(plan[i].config == plan[j].config) << i << " repeats " << j;
  }
  EXPECT_FALSE(accumulates_in_fp32(config(1, 1, 1, 2, kReductionInplace)));
  EXPECT_FALSE(accumulates_in_fp32(config(1, 1, 1, 2, kReductionOutputType)));
  EXPECT_FALSE(accumulates_in_fp32(config(1, 1, 1, 2, kReductionNone)));
  EXPECT_TRUE(accumulates_in_fp32(config(1, 1, 1, 8, kReductionComputeType)));
}

TEST(GemmCandidates, SplitKVariantsStopOnceTheGpuIsFull) {
  Fixture f;
  const auto plan = plan_candidates(f.heuristic, f.caps);
  // 0.24 waves unsplit: every slicing up to 16 stays within 4 waves.
  for (const int k : kSplitKs)
    EXPECT_TRUE(contains(plan, config(31, kTile128x256, 16, k, kReductionComputeType))) << k;
  // 0.48 waves: 8 slices make 3.84 waves, 16 would make 7.7.
  EXPECT_TRUE(contains(plan, config(31, kTile128x128, 16, 8, kReductionComputeType)));
  EXPECT_FALSE(contains(plan, config(31, kTile128x128, 16, 16, kReductionComputeType)));
  // Algorithm 5 cannot split K.
  for (const auto& c : plan)
    if (c.config.id == 5) {
      EXPECT_EQ(c.config.split_k, 1);
    }
}

TEST(GemmCandidates, SmallerTilesUseTheHeuristicsStagesOrTheSeedsAndAuto) {
  Fixture f;
  const auto plan = plan_candidates(f.heuristic, f.caps);
  // 64x128 was never paired with stages by the heuristic: the seed's (16) and auto (0).
  EXPECT_TRUE(contains(plan, config(31, kTile64x128, 16)));
  EXPECT_TRUE(contains(plan, config(31, kTile64x128, 0)));
  EXPECT_TRUE(contains(plan, config(31, kTile64x128, 16, 2, kReductionComputeType)));
  // Never a larger tile than the seed's.
  for (const auto& c : plan) EXPECT_NE(c.config.tile, kTile256x128);
  EXPECT_EQ(f.caps_calls[31], 1);
  EXPECT_EQ(f.caps_calls[5], 1);
}

TEST(GemmCandidates, FullGpuGetsNoSplitKAndNoSmallerTiles) {
  Fixture f;
  for (auto& h : f.heuristic) h.waves *= 20;  // a large batch: 4.8 waves unsplit
  const auto plan = plan_candidates(f.heuristic, f.caps);
  for (const auto& c : plan)
    if (c.heuristic_rank < 0) {
      EXPECT_EQ(c.config.split_k, 1);
      EXPECT_TRUE(c.config.tile == kTile128x256 || c.config.tile == kTile128x128 || c.config.tile == kTile64x128);
    }
}

TEST(GemmCandidates, LimitsAreRespected) {
  Fixture f;
  CandidateLimits limits;
  limits.max_candidates = 6;
  const auto plan = plan_candidates(f.heuristic, f.caps, limits);
  ASSERT_EQ(plan.size(), 6u);
  EXPECT_EQ(plan[0].heuristic_rank, 0);
  EXPECT_EQ(plan[3].heuristic_rank, 4);

  limits = {};
  limits.heuristic_kept = 1;
  limits.seeds = 1;
  limits.tile_seeds = 0;
  const auto small = plan_candidates(f.heuristic, f.caps, limits);
  // The first answer (also the only seed, unsplit), then its six slicings of K.
  ASSERT_EQ(small.size(), 1u + std::size(kSplitKs));
  EXPECT_EQ(small[0].heuristic_rank, 0);

  EXPECT_TRUE(plan_candidates({}, f.caps).empty());
}

TEST(GemmCandidates, KernelOptionsCoverEveryCustomOptionAndClusterOfTheFirstTwoTiles) {
  Fixture f;
  for (auto& h : f.heuristic) h.config.cluster_shape = kCluster1x2;
  f.heuristic[0].config.custom = 3;
  const auto base = f.caps;
  f.caps = [&](int id) {
    AlgoCaps c = base(id);
    c.custom_option_max = 4;
    return c;
  };
  const auto plan = plan_candidates(f.heuristic, f.caps);
  const auto with = [](AlgoConfig c, std::uint32_t custom, std::uint16_t cluster) {
    c.custom = custom;
    c.cluster_shape = cluster;
    return c;
  };
  // The first two distinct tiles: 128x256 (whatever custom option the heuristic gave it) and 128x128.
  for (const AlgoConfig& tile : {config(31, kTile128x256, 16), config(31, kTile128x128, 16)})
    for (std::uint32_t custom = 0; custom <= 4; ++custom)
      for (const std::uint16_t cluster : {kCluster1x2, kCluster1x1, kCluster2x1})
        EXPECT_TRUE(contains(plan, with(tile, custom, cluster))) << tile.tile << " " << custom << " " << cluster;
  // The third tile (algorithm 5) keeps the heuristic's option only.
  for (const auto& c : plan)
    if (c.config.id == 5) {
      EXPECT_EQ(c.config.custom, 0u);
      EXPECT_EQ(c.config.cluster_shape, kCluster1x2);
    }
  for (const auto& c : plan) EXPECT_NE(c.config.custom, 5u);  // past custom_option_max
}

TEST(GemmCandidates, KernelOptionsKeepAutomaticClustersAndTheLimits) {
  Fixture f;  // cluster shapes "auto": an algorithm without clusters
  const auto base = f.caps;
  f.caps = [&](int id) {
    AlgoCaps c = base(id);
    c.custom_option_max = 100;
    return c;
  };
  CandidateLimits limits;
  limits.max_custom_options = 3;
  const auto plan = plan_candidates(f.heuristic, f.caps, limits);
  for (const auto& c : plan) {
    EXPECT_EQ(c.config.cluster_shape, kClusterAuto);
    EXPECT_LT(c.config.custom, 3u);
  }
  AlgoConfig v = config(31, kTile128x256, 16);
  v.custom = 2;
  EXPECT_TRUE(contains(plan, v));
  limits.option_seeds = 0;
  for (const auto& c : plan_candidates(f.heuristic, f.caps, limits)) EXPECT_EQ(c.config.custom, 0u);
}

TEST(GemmCandidates, UnknownWavesDoNotPruneSplitK) {
  Fixture f;
  for (auto& h : f.heuristic) h.waves = 0;
  const auto plan = plan_candidates(f.heuristic, f.caps);
  EXPECT_TRUE(contains(plan, config(31, kTile128x128, 16, 16, kReductionComputeType)));
}

TEST(GemmCandidates, Names) {
  EXPECT_EQ(tile_name(kTile128x256), "128x256");
  EXPECT_EQ(tile_name(1), "8x8");
  EXPECT_EQ(tile_name(634), "512x1024");
  EXPECT_EQ(tile_name(0), "auto");
  EXPECT_EQ(cluster_name(kClusterAuto), "auto");
  EXPECT_EQ(cluster_name(kCluster2x1), "2x1");
  EXPECT_EQ(cluster_name(kCluster1x2), "1x2");
  EXPECT_EQ(cluster_name(99), "cluster 99");
  EXPECT_EQ(tile_name(100000), "tile 100000");
  ASSERT_TRUE(tile_shape(kTile64x128).has_value());
  EXPECT_EQ(tile_shape(kTile64x128)->rows, 64);
  EXPECT_EQ(tile_shape(kTile64x128)->cols, 128);
  EXPECT_FALSE(tile_shape(0).has_value());
  EXPECT_EQ(stages_name(16), "64x4");
  EXPECT_EQ(stages_name(35), "64xAUTO");
  EXPECT_EQ(stages_name(0), "auto");
  EXPECT_EQ(stages_name(29), "stages 29");
  EXPECT_EQ(reduction_name(kReductionComputeType), "fp32");
  EXPECT_EQ(reduction_name(kReductionNone), "none");
}

}  // namespace
}  // namespace streampipe::serving::detail
