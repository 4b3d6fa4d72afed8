// SPDX-License-Identifier: Apache-2.0
// The GEMM algorithm search's candidate planning (host only): the heuristic's first answers
// first and in order, each split-K answer's unsplit twin, kernel options (custom option x
// cluster shape) of the first tiles, fp32 accumulation throughout, no duplicates, the
// limits, and the names.

#include "gemm_candidates.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>

namespace streampipe::serving::detail {
namespace {

constexpr std::uint32_t kTile64x128 = 17, kTile128x128 = 20, kTile128x256 = 23;

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

AlgoConfig with_option(AlgoConfig c, std::uint32_t custom, std::uint16_t cluster) {
  c.custom = custom;
  c.cluster_shape = cluster;
  return c;
}

struct Fixture {
  std::vector<AlgoConfig> heuristic = {
      config(31, kTile128x256, 16),
      config(31, kTile128x256, 16, 4, kReductionComputeType),
      config(31, kTile128x128, 16),
      config(5, kTile64x128, 0, 2, kReductionInplace),  // bf16 partial sums: never a candidate
      config(5, kTile64x128, 0),
  };
  std::map<int, int> calls;
  std::function<std::uint32_t(int)> options = [this](int id) {
    ++calls[id];
    return 0u;  // one custom option (0)
  };
};

bool contains(const std::vector<Candidate>& v, const AlgoConfig& c) {
  return std::any_of(v.begin(), v.end(), [&](const Candidate& x) { return x.config == c; });
}

TEST(GemmCandidates, HeuristicAnswersComeFirstInOrderWithTheirRanks) {
  Fixture f;
  const auto plan = plan_candidates(f.heuristic, f.options);
  ASSERT_GE(plan.size(), 4u);
  EXPECT_EQ(plan[0].config, f.heuristic[0]);
  EXPECT_EQ(plan[0].heuristic_rank, 0);
  EXPECT_EQ(plan[1].config, f.heuristic[1]);
  EXPECT_EQ(plan[1].heuristic_rank, 1);
  EXPECT_EQ(plan[2].heuristic_rank, 2);
  EXPECT_EQ(plan[3].config, f.heuristic[4]);  // rank 3 reduces in bf16: skipped
  EXPECT_EQ(plan[3].heuristic_rank, 4);
  for (std::size_t i = 4; i < plan.size(); ++i) EXPECT_EQ(plan[i].heuristic_rank, -1) << i;
  EXPECT_TRUE(plan_candidates({}, f.options).empty());
}

TEST(GemmCandidates, EveryCandidateAccumulatesInFp32AndNoneRepeats) {
  Fixture f;
  const auto plan = plan_candidates(f.heuristic, f.options);
  for (std::size_t i = 0; i < plan.size(); ++i) {
    EXPECT_TRUE(accumulates_in_fp32(plan[i].config)) << i;
    for (std::size_t j = 0; j < i; ++j) EXPECT_FALSE(plan[i].config == plan[j].config) << i << " repeats " << j;
  }
  EXPECT_FALSE(accumulates_in_fp32(config(1, 1, 1, 2, kReductionInplace)));
  EXPECT_FALSE(accumulates_in_fp32(config(1, 1, 1, 2, kReductionOutputType)));
  EXPECT_TRUE(accumulates_in_fp32(config(1, 1, 1, 2, kReductionComputeType)));
  EXPECT_TRUE(accumulates_in_fp32(config(1, 1, 1)));
}

TEST(GemmCandidates, SplitAnswersGetAnUnsplitTwinAndNoOtherSlicing) {
  Fixture f;
  f.heuristic[0] = config(31, kTile64x128, 16, 3, kReductionComputeType);
  const auto plan = plan_candidates(f.heuristic, f.options);
  const auto twin = std::find_if(plan.begin(), plan.end(),
                                 [](const Candidate& c) { return c.config == config(31, kTile64x128, 16); });
  ASSERT_NE(twin, plan.end());
  EXPECT_EQ(twin->heuristic_rank, -1);
  EXPECT_GT(twin - plan.begin(), 3);  // after the answers
  // Answer 1 (128x256 split 4) gets its twin too: with answer 0 replaced, no answer is it.
  EXPECT_TRUE(contains(plan, config(31, kTile128x256, 16)));
  // Split-K only as the heuristic returned it.
  for (const auto& c : plan) {
    if (c.config.split_k > 1) {
      EXPECT_GE(c.heuristic_rank, 0) << c.config.split_k;
    }
  }
}

TEST(GemmCandidates, OnlyTheFirstAnswersAreKept) {
  Fixture f;
  CandidateLimits limits;
  limits.heuristic_answers = 2;
  limits.option_tiles = 0;
  const auto plan = plan_candidates(f.heuristic, f.options, limits);
  // The first two answers, then the second's twin (the first answer itself: already there).
  ASSERT_EQ(plan.size(), 2u);
  EXPECT_EQ(plan[0].heuristic_rank, 0);
  EXPECT_EQ(plan[1].heuristic_rank, 1);
  limits.heuristic_answers = 0;
  EXPECT_TRUE(plan_candidates(f.heuristic, f.options, limits).empty());
}

TEST(GemmCandidates, KernelOptionsCoverEveryCustomOptionAndClusterOfTheFirstTwoTiles) {
  Fixture f;
  for (auto& h : f.heuristic) h.cluster_shape = kCluster1x2;
  f.heuristic[0].custom = 3;
  f.options = [&](int id) {
    ++f.calls[id];
    return 4u;
  };
  const auto plan = plan_candidates(f.heuristic, f.options);
  // The first two distinct tiles: 128x256 (whatever custom option the heuristic gave it) and 128x128.
  for (const AlgoConfig& tile : {config(31, kTile128x256, 16), config(31, kTile128x128, 16)})
    for (std::uint32_t custom = 0; custom <= 4; ++custom)
      for (const std::uint16_t cluster : {kCluster1x2, kCluster1x1, kCluster2x1})
        EXPECT_TRUE(contains(plan, with_option(tile, custom, cluster))) << tile.tile << " " << custom << " " << cluster;
  // The third tile (algorithm 5) keeps the heuristic's option only.
  for (const auto& c : plan)
    if (c.config.id == 5) {
      EXPECT_EQ(c.config.custom, 0u);
      EXPECT_EQ(c.config.cluster_shape, kCluster1x2);
    }
  for (const auto& c : plan) EXPECT_NE(c.config.custom, 5u);  // past the algorithm's last option
  EXPECT_EQ(f.calls, (std::map<int, int>{{31, 1}}));  // asked once, for the tiles' one algorithm
}

TEST(GemmCandidates, KernelOptionsKeepAutomaticClustersAndTheLimits) {
  Fixture f;  // cluster shapes "auto": an algorithm without clusters
  f.options = [](int) { return 100u; };
  CandidateLimits limits;
  limits.max_custom_options = 3;
  const auto plan = plan_candidates(f.heuristic, f.options, limits);
  for (const auto& c : plan) {
    EXPECT_EQ(c.config.cluster_shape, kClusterAuto);
    EXPECT_LT(c.config.custom, 3u);
  }
  EXPECT_TRUE(contains(plan, with_option(config(31, kTile128x256, 16), 2, kClusterAuto)));
  limits.option_tiles = 0;
  for (const auto& c : plan_candidates(f.heuristic, f.options, limits)) EXPECT_EQ(c.config.custom, 0u);
}

TEST(GemmCandidates, Names) {
  EXPECT_EQ(tile_name(kTile128x256), "128x256");
  EXPECT_EQ(tile_name(kTile64x128), "64x128");
  EXPECT_EQ(tile_name(1), "8x8");
  EXPECT_EQ(tile_name(634), "512x1024");
  EXPECT_EQ(tile_name(0), "auto");
  EXPECT_EQ(tile_name(100000), "tile 100000");
  EXPECT_EQ(cluster_name(kClusterAuto), "auto");
  EXPECT_EQ(cluster_name(kCluster2x1), "2x1");
  EXPECT_EQ(cluster_name(kCluster1x2), "1x2");
  EXPECT_EQ(cluster_name(99), "cluster 99");
  EXPECT_EQ(stages_name(16), "64x4");
  EXPECT_EQ(stages_name(35), "64xAUTO");
  EXPECT_EQ(stages_name(0), "auto");
  EXPECT_EQ(stages_name(29), "stages 29");
}

}  // namespace
}  // namespace streampipe::serving::detail
