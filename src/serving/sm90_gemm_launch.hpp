// SPDX-License-Identifier: Apache-2.0
#pragma once
// Internal: the launch side of sm90_gemm.cu, the kernel's translation unit (built for
// sm_90a alone). sm90_gemm.cpp builds on these; nothing else calls them.

#include <cuda.h>
#include <cuda_runtime_api.h>

#include <cstdint>

namespace streampipe::serving::detail {

inline constexpr int kSm90TileOut = 128;  // output features per CTA
inline constexpr int kSm90TileK = 64;     // K per pipeline stage (the TMA box's inner extent)

// The kernel's parameters besides the two TMA descriptors (W in boxes of 64 x
// kSm90TileOut, X in boxes of 64 x tile_rows). The batch is cut into ceil(rows / N) row
// tiles of N rows, one CTA (or cluster) row per tile.
struct Sm90GemmLaunch {
  const std::uint16_t* bias = nullptr;
  std::uint16_t* y = nullptr;
  float* workspace = nullptr;     // groups > 1: groups x row tiles x tile_rows x out floats
  unsigned* counters = nullptr;   // groups > 1: row tiles x out / kSm90TileOut x cluster, zero between launches
  int tile_rows = 256;  // N: 64, 128 or 256
  int cluster = 1;      // CTAs per cluster, which sum their partials in shared memory
  int groups = 1;       // clusters per output tile, which sum theirs through the workspace
  int rows = 0, in = 0, out = 0;
  int ksteps = 0;       // in / (kSm90TileK x cluster x groups)
  int relu = 0;
};

// Pipeline stages of the kernel for N = tile_rows.
[[nodiscard]] int sm90_gemm_stages(int tile_rows);
// How many clusters of `cluster` CTAs can be resident at once (also raises the kernel's
// dynamic shared memory limit to what it needs).
[[nodiscard]] cudaError_t sm90_gemm_max_active_clusters(int tile_rows, int cluster, int* clusters);
[[nodiscard]] cudaError_t sm90_gemm_launch(const CUtensorMap& w_map, const CUtensorMap& x_map,
                                           const Sm90GemmLaunch& launch, cudaStream_t stream);

}  // namespace streampipe::serving::detail
