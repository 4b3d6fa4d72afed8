// SPDX-License-Identifier: Apache-2.0
#pragma once
// Internal, host only: which cuBLASLt GEMM configurations the per-shape algorithm search
// times (gemm_algorithm_search.hpp builds, checks and times them). Plain integers mirror
// cuBLASLt's enums so this planning compiles, and is tested, without cuBLAS.
//
// The plan: the heuristic's first answers as they are, then split-K variants (2..16 slices
// of K, partial sums reduced in fp32) of the first few distinct configurations, then the
// first configurations again with smaller tiles, then the first tiles with every kernel
// option (custom option x cluster shape). Few output tiles (a 4096-wide layer at a small
// batch gives 32 CTAs of 128x256 for 132 SMs) leave most of the GPU idle; more slices of K
// or smaller tiles fill it. Split-K variants stop once they would fill the GPU `max_waves`
// times over, so large batches do not time pointless slicings. The heuristic pairs each
// tile with one custom option and cluster shape; on an H100 another pairing of the same
// tile runs a 4096-wide layer at 256 rows up to 4% faster (docs/batching.md).

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace streampipe::serving::detail {

// cublasLtReductionScheme_t values (static_assert'ed where cuBLASLt is included).
inline constexpr std::uint32_t kReductionNone = 0;
inline constexpr std::uint32_t kReductionInplace = 1;
inline constexpr std::uint32_t kReductionComputeType = 2;
inline constexpr std::uint32_t kReductionOutputType = 4;

// cublasLtClusterShape_t values: "auto", and the shapes the option variants try.
inline constexpr std::uint16_t kClusterAuto = 0;
inline constexpr std::uint16_t kCluster1x1 = 2, kCluster2x1 = 3, kCluster1x2 = 5;
inline constexpr std::uint16_t kOptionClusters[] = {kCluster1x1, kCluster2x1, kCluster1x2};

// One algorithm configuration (cublasLtMatmulAlgo_t's configurable attributes).
struct AlgoConfig {
  int id = 0;
  std::uint32_t tile = 0, stages = 0;
  int split_k = 1;
  std::uint32_t reduction = kReductionNone;
  std::uint32_t swizzle = 0, custom = 0;
  std::uint16_t inner_shape = 0, cluster_shape = 0;
  friend bool operator==(const AlgoConfig&, const AlgoConfig&) = default;
};

// What one algorithm id supports (cublasLtMatmulAlgoCapGetAttribute).
struct AlgoCaps {
  bool split_k = false;
  std::uint32_t reduction_mask = 0;
  std::vector<std::uint32_t> tiles;
  std::uint32_t custom_option_max = 0;  // custom options 0..custom_option_max exist
};

// One answer of cublasLtMatmulAlgoGetHeuristic, in its order (best estimate first).
struct HeuristicEntry {
  AlgoConfig config;
  float waves = 0;  // wavesCount: 1.0 fills the GPU once; <= 0 when unknown
};

struct CandidateLimits {
  std::size_t heuristic_kept = 16;  // the heuristic's first usable answers, timed as they are
  std::size_t seeds = 6;            // distinct configurations whose K is split
  std::size_t tile_seeds = 2;       // of those, how many are also tried with smaller tiles
  std::size_t smaller_tiles = 4;    // the largest tiles below the seed's
  double max_waves = 4;             // no split-K variant fills the GPU more often than this
  // The first distinct tiles (algorithm, tile, stages) tried with every custom option up to
  // max_custom_options, each with its own cluster shape and, where the heuristic uses
  // cluster shapes at all (not "auto"), with those of kOptionClusters.
  std::size_t option_seeds = 2;
  std::uint32_t max_custom_options = 16;
  std::size_t max_candidates = 180;
};

// The K slicings tried beyond 1.
inline constexpr int kSplitKs[] = {2, 3, 4, 6, 8, 16};

struct Candidate {
  AlgoConfig config;
  int heuristic_rank = -1;  // >= 0: the heuristic's own answer, used exactly as returned
};

// fp32 accumulation end to end: a split-K configuration is usable only when its partial
// sums are reduced in the compute type (fp32), never in bf16 (in place or output type).
[[nodiscard]] bool accumulates_in_fp32(const AlgoConfig& c) noexcept;

// The ordered, duplicate-free candidate list (at most limits.max_candidates). `caps` is
// asked once per algorithm id used as a seed.
[[nodiscard]] std::vector<Candidate> plan_candidates(std::span<const HeuristicEntry> heuristic,
                                                     const std::function<AlgoCaps(int id)>& caps,
                                                     const CandidateLimits& limits = {});

// cublasLtMatmulTile_t as rows x columns of D; nullopt for undefined or unknown ids.
struct TileShape {
  int rows = 0, cols = 0;
};
[[nodiscard]] std::optional<TileShape> tile_shape(std::uint32_t tile) noexcept;
[[nodiscard]] std::string tile_name(std::uint32_t tile);      // "128x256", "auto", "tile 700"
[[nodiscard]] std::string stages_name(std::uint32_t stages);  // "64x4", "128xAUTO", "auto"
[[nodiscard]] std::string reduction_name(std::uint32_t reduction);
[[nodiscard]] std::string cluster_name(std::uint16_t cluster);  // "auto", "1x1", "2x1", "cluster 40"

}  // namespace streampipe::serving::detail
