// SPDX-License-Identifier: Apache-2.0
#include "gemm_candidates.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <iterator>
#include <map>

namespace streampipe::serving::detail {
namespace {

// cublasLtMatmulTile_t 1, 2, ...: rows x columns of the output tile (cuBLASLt 13's list,
// contiguous from 1; newer ids print as numbers).
constexpr std::array<std::array<std::uint16_t, 2>, 634> kTiles = {{
    {8, 8}, {8, 16}, {16, 8}, {8, 32}, {16, 16}, {32, 8}, {8, 64}, {16, 32}, {32, 16}, {64, 8}, {32, 32},
    {32, 64}, {64, 32}, {32, 128}, {64, 64}, {128, 32}, {64, 128}, {128, 64}, {64, 256}, {128, 128}, {256, 64},
    {64, 512}, {128, 256}, {256, 128}, {512, 64}, {64, 96}, {96, 64}, {96, 128}, {128, 160}, {160, 128},
    {192, 128}, {128, 192}, {128, 96}, {32, 256}, {256, 32}, {8, 128}, {8, 192}, {8, 256}, {8, 320}, {8, 384},
    {8, 448}, {8, 512}, {8, 576}, {8, 640}, {8, 704}, {8, 768}, {16, 64}, {16, 128}, {16, 192}, {16, 256},
    {16, 320}, {16, 384}, {16, 448}, {16, 512}, {16, 576}, {16, 640}, {16, 704}, {16, 768}, {24, 64}, {24, 128},
    {24, 192}, {24, 256}, {24, 320}, {24, 384}, {24, 448}, {24, 512}, {24, 576}, {24, 640}, {24, 704},
    {24, 768}, {32, 192}, {32, 320}, {32, 384}, {32, 448}, {32, 512}, {32, 576}, {32, 640}, {32, 704},
    {32, 768}, {40, 64}, {40, 128}, {40, 192}, {40, 256}, {40, 320}, {40, 384}, {40, 448}, {40, 512}, {40, 576},
    {40, 640}, {40, 704}, {40, 768}, {48, 64}, {48, 128}, {48, 192}, {48, 256}, {48, 320}, {48, 384}, {48, 448},
    {48, 512}, {48, 576}, {48, 640}, {48, 704}, {48, 768}, {56, 64}, {56, 128}, {56, 192}, {56, 256}, {56, 320},
    {56, 384}, {56, 448}, {56, 512}, {56, 576}, {56, 640}, {56, 704}, {56, 768}, {64, 192}, {64, 320},
    {64, 384}, {64, 448}, {64, 576}, {64, 640}, {64, 704}, {64, 768}, {72, 64}, {72, 128}, {72, 192}, {72, 256},
    {72, 320}, {72, 384}, {72, 448}, {72, 512}, {72, 576}, {72, 640}, {80, 64}, {80, 128}, {80, 192}, {80, 256},
    {80, 320}, {80, 384}, {80, 448}, {80, 512}, {80, 576}, {88, 64}, {88, 128}, {88, 192}, {88, 256}, {88, 320},
    {88, 384}, {88, 448}, {88, 512}, {96, 192}, {96, 256}, {96, 320}, {96, 384}, {96, 448}, {96, 512},
    {104, 64}, {104, 128}, {104, 192}, {104, 256}, {104, 320}, {104, 384}, {104, 448}, {112, 64}, {112, 128},
    {112, 192}, {112, 256}, {112, 320}, {112, 384}, {120, 64}, {120, 128}, {120, 192}, {120, 256}, {120, 320},
    {120, 384}, {128, 320}, {128, 384}, {136, 64}, {136, 128}, {136, 192}, {136, 256}, {136, 320}, {144, 64},
    {144, 128}, {144, 192}, {144, 256}, {144, 320}, {152, 64}, {152, 128}, {152, 192}, {152, 256}, {152, 320},
    {160, 64}, {160, 192}, {160, 256}, {168, 64}, {168, 128}, {168, 192}, {168, 256}, {176, 64}, {176, 128},
    {176, 192}, {176, 256}, {184, 64}, {184, 128}, {184, 192}, {184, 256}, {192, 64}, {192, 192}, {192, 256},
    {200, 64}, {200, 128}, {200, 192}, {208, 64}, {208, 128}, {208, 192}, {216, 64}, {216, 128}, {216, 192},
    {224, 64}, {224, 128}, {224, 192}, {232, 64}, {232, 128}, {232, 192}, {240, 64}, {240, 128}, {240, 192},
    {248, 64}, {248, 128}, {248, 192}, {256, 192}, {264, 64}, {264, 128}, {272, 64}, {272, 128}, {280, 64},
    {280, 128}, {288, 64}, {288, 128}, {296, 64}, {296, 128}, {304, 64}, {304, 128}, {312, 64}, {312, 128},
    {320, 64}, {320, 128}, {328, 64}, {328, 128}, {336, 64}, {336, 128}, {344, 64}, {344, 128}, {352, 64},
    {352, 128}, {360, 64}, {360, 128}, {368, 64}, {368, 128}, {376, 64}, {376, 128}, {384, 64}, {384, 128},
    {392, 64}, {400, 64}, {408, 64}, {416, 64}, {424, 64}, {432, 64}, {440, 64}, {448, 64}, {456, 64},
    {464, 64}, {472, 64}, {480, 64}, {488, 64}, {496, 64}, {504, 64}, {520, 64}, {528, 64}, {536, 64},
    {544, 64}, {552, 64}, {560, 64}, {568, 64}, {576, 64}, {584, 64}, {592, 64}, {600, 64}, {608, 64},
    {616, 64}, {624, 64}, {632, 64}, {640, 64}, {648, 64}, {656, 64}, {664, 64}, {672, 64}, {680, 64},
    {688, 64}, {696, 64}, {704, 64}, {712, 64}, {720, 64}, {728, 64}, {736, 64}, {744, 64}, {752, 64},
    {760, 64}, {768, 64}, {64, 16}, {64, 24}, {64, 40}, {64, 48}, {64, 56}, {64, 72}, {64, 80}, {64, 88},
    {64, 104}, {64, 112}, {64, 120}, {64, 136}, {64, 144}, {64, 152}, {64, 160}, {64, 168}, {64, 176},
    {64, 184}, {64, 200}, {64, 208}, {64, 216}, {64, 224}, {64, 232}, {64, 240}, {64, 248}, {64, 264},
    {64, 272}, {64, 280}, {64, 288}, {64, 296}, {64, 304}, {64, 312}, {64, 328}, {64, 336}, {64, 344},
    {64, 352}, {64, 360}, {64, 368}, {64, 376}, {64, 392}, {64, 400}, {64, 408}, {64, 416}, {64, 424},
    {64, 432}, {64, 440}, {64, 456}, {64, 464}, {64, 472}, {64, 480}, {64, 488}, {64, 496}, {64, 504},
    {64, 520}, {64, 528}, {64, 536}, {64, 544}, {64, 552}, {64, 560}, {64, 568}, {64, 584}, {64, 592},
    {64, 600}, {64, 608}, {64, 616}, {64, 624}, {64, 632}, {64, 648}, {64, 656}, {64, 664}, {64, 672},
    {64, 680}, {64, 688}, {64, 696}, {64, 712}, {64, 720}, {64, 728}, {64, 736}, {64, 744}, {64, 752},
    {64, 760}, {128, 8}, {128, 16}, {128, 24}, {128, 40}, {128, 48}, {128, 56}, {128, 72}, {128, 80}, {128, 88},
    {128, 104}, {128, 112}, {128, 120}, {128, 136}, {128, 144}, {128, 152}, {128, 168}, {128, 176}, {128, 184},
    {128, 200}, {128, 208}, {128, 216}, {128, 224}, {128, 232}, {128, 240}, {128, 248}, {128, 264}, {128, 272},
    {128, 280}, {128, 288}, {128, 296}, {128, 304}, {128, 312}, {128, 328}, {128, 336}, {128, 344}, {128, 352},
    {128, 360}, {128, 368}, {128, 376}, {128, 392}, {128, 400}, {128, 408}, {128, 416}, {128, 424}, {128, 432},
    {128, 440}, {128, 448}, {128, 456}, {128, 464}, {128, 472}, {128, 480}, {128, 488}, {128, 496}, {128, 504},
    {128, 512}, {192, 8}, {192, 16}, {192, 24}, {192, 32}, {192, 40}, {192, 48}, {192, 56}, {192, 72},
    {192, 80}, {192, 88}, {192, 96}, {192, 104}, {192, 112}, {192, 120}, {192, 136}, {192, 144}, {192, 152},
    {192, 160}, {192, 168}, {192, 176}, {192, 184}, {192, 200}, {192, 208}, {192, 216}, {192, 224}, {192, 232},
    {192, 240}, {192, 248}, {192, 264}, {192, 272}, {192, 280}, {192, 288}, {192, 296}, {192, 304}, {192, 312},
    {192, 320}, {192, 328}, {192, 336}, {256, 8}, {256, 16}, {256, 24}, {256, 40}, {256, 48}, {256, 56},
    {256, 72}, {256, 80}, {256, 88}, {256, 96}, {256, 104}, {256, 112}, {256, 120}, {256, 136}, {256, 144},
    {256, 152}, {256, 160}, {256, 168}, {256, 176}, {256, 184}, {256, 200}, {256, 208}, {256, 216}, {256, 224},
    {256, 232}, {256, 240}, {256, 248}, {256, 256}, {320, 8}, {320, 16}, {320, 24}, {320, 32}, {320, 40},
    {320, 48}, {320, 56}, {320, 72}, {320, 80}, {320, 88}, {320, 96}, {320, 104}, {320, 112}, {320, 120},
    {320, 136}, {320, 144}, {320, 152}, {320, 160}, {320, 168}, {320, 176}, {320, 184}, {320, 192}, {320, 200},
    {384, 8}, {384, 16}, {384, 24}, {384, 32}, {384, 40}, {384, 48}, {384, 56}, {384, 72}, {384, 80}, {384, 88},
    {384, 96}, {384, 104}, {384, 112}, {384, 120}, {384, 136}, {384, 144}, {384, 152}, {384, 160}, {384, 168},
    {448, 8}, {448, 16}, {448, 24}, {448, 32}, {448, 40}, {448, 48}, {448, 56}, {448, 72}, {448, 80}, {448, 88},
    {448, 96}, {448, 104}, {448, 112}, {448, 120}, {448, 128}, {448, 136}, {448, 144}, {512, 8}, {512, 16},
    {512, 24}, {512, 32}, {512, 40}, {512, 48}, {512, 56}, {512, 72}, {512, 80}, {512, 88}, {512, 96},
    {512, 104}, {512, 112}, {512, 120}, {512, 128}, {576, 8}, {576, 16}, {576, 24}, {576, 32}, {576, 40},
    {576, 48}, {576, 56}, {576, 72}, {576, 80}, {576, 88}, {576, 96}, {576, 104}, {576, 112}, {640, 8},
    {640, 16}, {640, 24}, {640, 32}, {640, 40}, {640, 48}, {640, 56}, {640, 72}, {640, 80}, {640, 88},
    {640, 96}, {704, 8}, {704, 16}, {704, 24}, {704, 32}, {704, 40}, {704, 48}, {704, 56}, {704, 72}, {704, 80},
    {704, 88}, {768, 8}, {768, 16}, {768, 24}, {768, 32}, {768, 40}, {768, 48}, {768, 56}, {768, 72}, {768, 80},
    {256, 512}, {256, 1024}, {512, 512}, {512, 1024},
}};

// cublasLtMatmulStages_t: {id, K depth of a stage, stage count (0 = chosen at run time)}.
struct StagesName {
  std::uint32_t id;
  std::uint16_t depth, count;
};
constexpr StagesName kStages[] = {
    {1, 16, 1},  {2, 16, 2},  {3, 16, 3},   {4, 16, 4},   {5, 16, 5},   {6, 16, 6},   {7, 32, 1},    {8, 32, 2},
    {9, 32, 3},  {10, 32, 4}, {11, 32, 5},  {12, 32, 6},  {13, 64, 1},  {14, 64, 2},  {15, 64, 3},   {16, 64, 4},
    {17, 64, 5}, {18, 64, 6}, {19, 128, 1}, {20, 128, 2}, {21, 128, 3}, {22, 128, 4}, {23, 128, 5},  {24, 128, 6},
    {25, 32, 10}, {26, 8, 4}, {27, 16, 10}, {28, 8, 5},   {31, 8, 3},   {32, 8, 0},   {33, 16, 0},   {34, 32, 0},
    {35, 64, 0}, {36, 128, 0}, {37, 256, 0}, {38, 768, 0}};

struct Seed {
  AlgoConfig config;  // split_k 1, no reduction
  double waves = 0;   // at split_k 1; <= 0 when unknown
};

}  // namespace

bool accumulates_in_fp32(const AlgoConfig& c) noexcept {
  return c.split_k <= 1 ? c.reduction == kReductionNone || c.reduction == kReductionComputeType
                        : c.reduction == kReductionComputeType;
}

std::vector<Candidate> plan_candidates(std::span<const HeuristicEntry> heuristic,
                                       const std::function<AlgoCaps(int id)>& caps, const CandidateLimits& limits) {
  std::vector<Candidate> out;
  const auto add = [&](const AlgoConfig& c, int rank) {
    if (out.size() >= limits.max_candidates || !accumulates_in_fp32(c)) return false;
    if (std::any_of(out.begin(), out.end(), [&](const Candidate& x) { return x.config == c; })) return false;
    out.push_back({c, rank});
    return true;
  };

  std::size_t kept = 0;
  for (std::size_t i = 0; i < heuristic.size() && kept < limits.heuristic_kept; ++i)
    if (add(heuristic[i].config, static_cast<int>(i))) ++kept;

  std::vector<Seed> seeds;
  for (const auto& h : heuristic) {
    if (seeds.size() >= limits.seeds) break;
    AlgoConfig s = h.config;
    s.split_k = 1;
    s.reduction = kReductionNone;
    if (std::any_of(seeds.begin(), seeds.end(), [&](const Seed& x) { return x.config == s; })) continue;
    const double waves = h.waves > 0 ? static_cast<double>(h.waves) / std::max(1, h.config.split_k) : 0.0;
    seeds.push_back({s, waves});
  }

  std::map<int, AlgoCaps> known;
  const auto caps_of = [&](int id) -> const AlgoCaps& {
    auto it = known.find(id);
    if (it == known.end()) it = known.emplace(id, caps(id)).first;
    return it->second;
  };
  const auto splits = [](const AlgoCaps& c) { return c.split_k && (c.reduction_mask & kReductionComputeType) != 0; };
  const auto fits = [&](double waves, int k) { return waves <= 0 || waves * k <= limits.max_waves; };
  const auto add_split = [&](AlgoConfig c, int k) {
    c.split_k = k;
    c.reduction = kReductionComputeType;
    (void)add(c, -1);
  };

  for (const Seed& s : seeds) {
    (void)add(s.config, -1);
    if (!splits(caps_of(s.config.id))) continue;
    for (const int k : kSplitKs) {
      if (!fits(s.waves, k)) break;
      add_split(s.config, k);
    }
  }

  for (std::size_t j = 0; j < std::min(limits.tile_seeds, seeds.size()); ++j) {
    const Seed& s = seeds[j];
    const auto shape = tile_shape(s.config.tile);
    if (!shape) continue;
    const AlgoCaps& c = caps_of(s.config.id);
    const int area = shape->rows * shape->cols;
    std::vector<std::pair<int, std::uint32_t>> smaller;  // (area, tile)
    for (const std::uint32_t t : c.tiles)
      if (const auto ts = tile_shape(t); ts && ts->rows * ts->cols < area) smaller.emplace_back(ts->rows * ts->cols, t);
    std::sort(smaller.begin(), smaller.end(), [](const auto& a, const auto& b) {
      return a.first != b.first ? a.first > b.first : a.second < b.second;
    });
    smaller.erase(std::unique(smaller.begin(), smaller.end()), smaller.end());
    if (smaller.size() > limits.smaller_tiles) smaller.resize(limits.smaller_tiles);
    for (const auto& [tile_area, tile] : smaller) {
      const double waves = s.waves > 0 ? s.waves * area / tile_area : 0.0;
      if (!fits(waves, 1)) continue;
      // A stage count the heuristic paired with this tile is known to work; otherwise the
      // seed's, and "undefined" (cuBLASLt picks): AlgoCheck rejects what does not fit.
      std::vector<std::uint32_t> stages;
      for (const auto& h : heuristic)
        if (h.config.id == s.config.id && h.config.tile == tile &&
            std::find(stages.begin(), stages.end(), h.config.stages) == stages.end())
          stages.push_back(h.config.stages);
      if (stages.empty()) stages = {s.config.stages, 0u};
      for (const std::uint32_t st : stages) {
        AlgoConfig v = s.config;
        v.tile = tile;
        v.stages = st;
        (void)add(v, -1);
        if (!splits(c)) continue;
        for (const int k : {2, 4})
          if (fits(waves, k)) add_split(v, k);
      }
    }
  }

  // Kernel options: the same tile with every custom option and cluster shape. Distinct
  // tiles only: the heuristic's answers often differ in these options alone.
  std::vector<AlgoConfig> option_seeds;
  for (const Seed& s : seeds) {
    if (option_seeds.size() >= limits.option_seeds) break;
    if (std::any_of(option_seeds.begin(), option_seeds.end(), [&](const AlgoConfig& x) {
          return x.id == s.config.id && x.tile == s.config.tile && x.stages == s.config.stages;
        }))
      continue;
    option_seeds.push_back(s.config);
  }
  for (const AlgoConfig& seed : option_seeds) {
    const std::uint32_t customs = std::min(caps_of(seed.id).custom_option_max + 1, limits.max_custom_options);
    std::vector<std::uint16_t> clusters{seed.cluster_shape};
    if (seed.cluster_shape != kClusterAuto)
      for (const std::uint16_t c : kOptionClusters)
        if (c != seed.cluster_shape) clusters.push_back(c);
    for (std::uint32_t custom = 0; custom < customs; ++custom)
      for (const std::uint16_t cluster : clusters) {
        AlgoConfig v = seed;
        v.custom = custom;
        v.cluster_shape = cluster;
        (void)add(v, -1);
      }
  }
  return out;
}

std::optional<TileShape> tile_shape(std::uint32_t tile) noexcept {
  if (tile == 0 || tile > kTiles.size()) return std::nullopt;
  const auto& t = kTiles[tile - 1];
  return TileShape{t[0], t[1]};
}

std::string tile_name(std::uint32_t tile) {
  if (tile == 0) return "auto";
  if (const auto t = tile_shape(tile)) return fmt::format("{}x{}", t->rows, t->cols);
  return fmt::format("tile {}", tile);
}

std::string stages_name(std::uint32_t stages) {
  if (stages == 0) return "auto";
  for (const auto& s : kStages)
    if (s.id == stages) return s.count == 0 ? fmt::format("{}xAUTO", s.depth) : fmt::format("{}x{}", s.depth, s.count);
  return fmt::format("stages {}", stages);
}

std::string reduction_name(std::uint32_t reduction) {
  switch (reduction) {
    case kReductionNone: return "none";
    case kReductionInplace: return "in place";
    case kReductionComputeType: return "fp32";
    case kReductionOutputType: return "output type";
    default: return fmt::format("scheme {}", reduction);
  }
}

std::string cluster_name(std::uint16_t cluster) {
  switch (cluster) {
    case kClusterAuto: return "auto";
    case kCluster1x1: return "1x1";
    case kCluster2x1: return "2x1";
    case 4: return "4x1";
    case kCluster1x2: return "1x2";
    case 6: return "2x2";
    case 7: return "4x2";
    case 8: return "1x4";
    case 9: return "2x4";
    case 10: return "4x4";
    default: return fmt::format("cluster {}", cluster);
  }
}

}  // namespace streampipe::serving::detail
