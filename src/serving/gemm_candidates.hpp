// SPDX-License-Identifier: Apache-2.0
#pragma once
// Internal, host only: which cuBLASLt GEMM configurations the per-shape algorithm search
// times (gemm_algorithm_search.hpp builds, checks and times them). Plain integers mirror
// cuBLASLt's enums so this planning compiles, and is tested, without cuBLAS.
//
// The plan, each part kept for a gain measured at serve-bench's shapes (docs/batching.md):
//   1. the heuristic's first answers, as returned (one of them beats the first at 16 rows);
//   2. each of those with its K split removed (at 1-8 rows the heuristic answers split-K,
//      and the same tile unsplit runs the layers ~9% faster);
//   3. the first distinct tiles with every kernel option: custom option x cluster shape
//      (the heuristic pairs each tile with one; another pairing runs 256 rows ~3.5% faster).
// Split-K variants and smaller tiles of the search's earlier plan never won and are gone.

#include <cstddef>
#include <cstdint>
#include <functional>
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

struct CandidateLimits {
  std::size_t heuristic_answers = 8;  // the heuristic's first usable answers, timed as returned
  // The first distinct tiles (algorithm, tile, stages) tried with every custom option below
  // max_custom_options, each with its own cluster shape and, where the heuristic uses
  // cluster shapes at all (not "auto"), with those of kOptionClusters.
  std::size_t option_tiles = 2;
  std::uint32_t max_custom_options = 16;
};

struct Candidate {
  AlgoConfig config;
  int heuristic_rank = -1;  // >= 0: the heuristic's own answer (its index), used exactly as returned
};

// fp32 accumulation end to end: a split-K configuration is usable only when its partial
// sums are reduced in the compute type (fp32), never in bf16 (in place or output type).
[[nodiscard]] bool accumulates_in_fp32(const AlgoConfig& c) noexcept;

// The ordered, duplicate-free candidate list for the heuristic's answers (best estimate
// first). `custom_option_max(id)` says which custom options algorithm `id` has (0..max); it
// is asked once per algorithm id whose tiles get kernel options.
[[nodiscard]] std::vector<Candidate> plan_candidates(std::span<const AlgoConfig> heuristic,
                                                     const std::function<std::uint32_t(int id)>& custom_option_max,
                                                     const CandidateLimits& limits = {});

[[nodiscard]] std::string tile_name(std::uint32_t tile);      // "128x256", "auto", "tile 700"
[[nodiscard]] std::string stages_name(std::uint32_t stages);  // "64x4", "128xAUTO", "auto"
[[nodiscard]] std::string cluster_name(std::uint16_t cluster);  // "auto", "1x1", "2x1", "cluster 40"

}  // namespace streampipe::serving::detail
