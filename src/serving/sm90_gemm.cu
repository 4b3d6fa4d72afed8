// SPDX-License-Identifier: Apache-2.0
#include "sm90_gemm_launch.hpp"
#include "sm90_ptx.cuh"

#include <cooperative_groups.h>
#include <cuda_bf16.h>
#include <algorithm>
#include <type_traits>

namespace streampipe::serving::detail {
namespace {

namespace cg = cooperative_groups;

constexpr int kTileOut = kSm90TileOut;  // one 64-row wgmma per consumer warpgroup
constexpr int kTileK = kSm90TileK;     // one 128-byte swizzle atom of bf16
constexpr int kThreads = 384;  // warpgroup 0 issues the loads, warpgroups 1 and 2 multiply
constexpr int kConsumerWarps = 8;
constexpr int kStageBudget = 192 * 1024;  // of the 227 KB of shared memory an SM offers a CTA

template <int N>
struct Tile {
  static constexpr int w_bytes = kTileOut * kTileK * 2;
  static constexpr int x_bytes = N * kTileK * 2;
  static constexpr int stage_bytes = w_bytes + x_bytes;
  // Small N leaves room for more stages: more bytes of W in flight per SM, which is what a
  // memory-bound GEMM needs.
  static constexpr int stages = std::min(8, kStageBudget / stage_bytes);
  // The fp32 partial tile, N rows of 128 features, reuses the stage memory once the main
  // loop is done. Its rows are padded by 4 floats so that the fragment stores of a warp
  // (8 features x 4 rows) fall in 32 different banks.
  static constexpr int partial_stride = kTileOut + 4;
  static constexpr int partial_bytes = N * partial_stride * 4;
  static constexpr int barrier_bytes = 2 * stages * 8;
  static constexpr int smem_bytes = stages * stage_bytes + barrier_bytes + 1024;  // + alignment slack
  static_assert(partial_bytes <= stages * stage_bytes);
  static_assert(stage_bytes % 1024 == 0, "every stage starts on a swizzle atom");
};

__device__ __forceinline__ std::uint32_t pack_bf16x2(float lo, float hi) {
  const __nv_bfloat162 v = __floats2bfloat162_rn(lo, hi);
  return *reinterpret_cast<const std::uint32_t*>(&v);
}

__device__ __forceinline__ float bf16_bits_to_float(std::uint32_t bits16) {
  return __uint_as_float(bits16 << 16);
}

// Sums four floats of the fp32 partial tile of every CTA of the cluster.
template <int N>
__device__ __forceinline__ float4 cluster_sum(const cg::cluster_group& cluster, const float* partial, int offset) {
  float4 sum = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
  for (unsigned r = 0; r < cluster.num_blocks(); ++r) {
    const float4 v = *reinterpret_cast<const float4*>(cluster.map_shared_rank(partial, r) + offset);
    sum.x += v.x;
    sum.y += v.y;
    sum.z += v.z;
    sum.w += v.w;
  }
  return sum;
}

// Adds the bias to four consecutive features, applies the activation, stores them as bf16.
__device__ __forceinline__ void store_output(const Sm90GemmLaunch& p, float4 v, int row, int feature) {
  const uint2 b = *reinterpret_cast<const uint2*>(p.bias + feature);
  v.x += bf16_bits_to_float(b.x & 0xFFFFu);
  v.y += bf16_bits_to_float(b.x >> 16);
  v.z += bf16_bits_to_float(b.y & 0xFFFFu);
  v.w += bf16_bits_to_float(b.y >> 16);
  if (p.relu) {
    v.x = fmaxf(v.x, 0.0f);
    v.y = fmaxf(v.y, 0.0f);
    v.z = fmaxf(v.z, 0.0f);
    v.w = fmaxf(v.w, 0.0f);
  }
  *reinterpret_cast<uint2*>(p.y + static_cast<std::size_t>(row) * p.out + feature) =
      make_uint2(pack_bf16x2(v.x, v.y), pack_bf16x2(v.z, v.w));
}

// grid (cluster x groups, out / 128, row tiles), clusters of `cluster` CTAs along x. CTA
// x takes the x-th of cluster x groups slices of K; z the z-th N batch rows. The CTAs of a
// cluster sum their partials through distributed shared memory, each for 1/cluster of the
// rows; with groups > 1 each cluster's sums go to its slot of the workspace and the
// cluster that arrives last for a tile adds the slots up and writes the output (no CTA
// ever waits for another cluster).
template <int N>
__global__ void __launch_bounds__(kThreads, 1)
    sm90_gemm_kernel(const __grid_constant__ CUtensorMap w_map, const __grid_constant__ CUtensorMap x_map,
                     const __grid_constant__ Sm90GemmLaunch p) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  using T = Tile<N>;
  extern __shared__ std::uint8_t smem_raw[];
  // 128-byte swizzle repeats every 1024 bytes; wgmma's descriptors assume stages aligned to it.
  std::uint8_t* smem = reinterpret_cast<std::uint8_t*>((reinterpret_cast<std::uintptr_t>(smem_raw) + 1023) &
                                                       ~std::uintptr_t{1023});
  auto* full = reinterpret_cast<std::uint64_t*>(smem + T::stages * T::stage_bytes);
  std::uint64_t* empty = full + T::stages;
  __shared__ unsigned arrival;

  const cg::cluster_group cluster = cg::this_cluster();
  const int rank = static_cast<int>(cluster.block_rank());
  const int cluster_size = static_cast<int>(cluster.num_blocks());
  const int group = static_cast<int>(blockIdx.x) / cluster_size;
  const int tile = static_cast<int>(blockIdx.y);
  const int out0 = tile * kTileOut;
  const int batch0 = static_cast<int>(blockIdx.z) * N;  // this CTA's first batch row
  const int tile_rows_live = min(N, p.rows - batch0);  // of its N rows, those in the batch
  const int k0 = static_cast<int>(blockIdx.x) * p.ksteps * kTileK;
  const int warpgroup = static_cast<int>(threadIdx.x) / 128;

  if (threadIdx.x == 0) {
    for (int s = 0; s < T::stages; ++s) {
      sm90::mbarrier_init(&full[s], 1);
      sm90::mbarrier_init(&empty[s], kConsumerWarps);
    }
    sm90::mbarrier_init_fence();
    sm90::tma_prefetch_descriptor(&w_map);
    sm90::tma_prefetch_descriptor(&x_map);
  }
  __syncthreads();

  float acc[N / 2];
#pragma unroll
  for (int i = 0; i < N / 2; ++i) acc[i] = 0.0f;

  if (warpgroup == 0) {
    if (threadIdx.x == 0) {
      for (int i = 0; i < p.ksteps; ++i) {
        const int s = i % T::stages;
        if (i >= T::stages) sm90::mbarrier_wait(&empty[s], static_cast<std::uint32_t>((i / T::stages - 1) & 1));
        std::uint8_t* stage = smem + s * T::stage_bytes;
        sm90::mbarrier_arrive_expect_tx(&full[s], T::stage_bytes);
        sm90::tma_load_2d(stage, &w_map, k0 + i * kTileK, out0, &full[s]);
        sm90::tma_load_2d(stage + T::w_bytes, &x_map, k0 + i * kTileK, batch0, &full[s]);
      }
    }
  } else {
    const int consumer = warpgroup - 1;
    const int lane = static_cast<int>(threadIdx.x) % 32;
    for (int i = 0; i < p.ksteps; ++i) {
      const int s = i % T::stages;
      sm90::mbarrier_wait(&full[s], static_cast<std::uint32_t>((i / T::stages) & 1));
      const std::uint8_t* w = smem + s * T::stage_bytes + consumer * 64 * 128;  // this warpgroup's 64 features
      const std::uint8_t* x = smem + s * T::stage_bytes + T::w_bytes;
      sm90::wgmma_fence();
#pragma unroll
      for (int kk = 0; kk < kTileK / 16; ++kk) {
        const std::uint64_t a = sm90::kmajor_sw128_descriptor(w + kk * 32);
        const std::uint64_t b = sm90::kmajor_sw128_descriptor(x + kk * 32);
        if constexpr (N == 256) sm90::wgmma_m64n256k16(acc, a, b);
        else if constexpr (N == 128) sm90::wgmma_m64n128k16(acc, a, b);
        else sm90::wgmma_m64n64k16(acc, a, b);
      }
      sm90::wgmma_commit();
      // One group stays in flight: the previous stage's multiplies are done, its memory
      // goes back to the producer while this stage's run.
      sm90::wgmma_wait<1>();
      sm90::fence_accumulators(acc);
      // One arrival per warp: 256 arrivals on one barrier would serialize for longer than a
      // stage's multiplies take.
      if (i > 0 && lane == 0) sm90::mbarrier_arrive(&empty[(i - 1) % T::stages]);
    }
    sm90::wgmma_wait<0>();
    sm90::fence_accumulators(acc);
  }
  // Every stage has been consumed: its memory now takes this CTA's fp32 partial tile,
  // stored as [batch row][feature].
  __syncthreads();
  auto* partial = reinterpret_cast<float*>(smem);
  if (warpgroup > 0) {
    const int t = static_cast<int>(threadIdx.x) % 128;
    const int feature = (warpgroup - 1) * 64 + 16 * (t / 32) + (t % 32) / 4;
    const int row = 2 * (t % 4);
#pragma unroll
    for (int j = 0; j < N / 8; ++j)
#pragma unroll
      for (int i = 0; i < 2; ++i)
#pragma unroll
        for (int c = 0; c < 2; ++c)
          partial[(8 * j + row + c) * T::partial_stride + feature + 8 * i] = acc[4 * j + 2 * i + c];
  }
  cluster.sync();  // every partial of the cluster is written and visible

  // This CTA reduces rows [rank, rank + 1) x N / cluster_size of the tile over the
  // cluster, four features per thread and step, a warp covering one row's 128 features.
  // `row` below counts from the tile's first batch row.
  const int rows_per_rank = N / cluster_size;
  const int row0 = rank * rows_per_rank;
  const int live_rows = max(0, min(rows_per_rank, tile_rows_live - row0));
  const int items = live_rows * (kTileOut / 4);
  if (p.groups == 1) {
#pragma unroll 4
    for (int item = static_cast<int>(threadIdx.x); item < items; item += kThreads) {
      const int row = row0 + item / (kTileOut / 4), f = 4 * (item % (kTileOut / 4));
      store_output(p, cluster_sum<N>(cluster, partial, row * T::partial_stride + f), batch0 + row, out0 + f);
    }
  } else {
    // This cluster's slot for (row tile, tile, rank): live_rows x 128 floats, row-major.
    const auto slot_floats = static_cast<std::size_t>(rows_per_rank) * kTileOut;
    const int reduction = (static_cast<int>(blockIdx.z) * static_cast<int>(gridDim.y) + tile) * cluster_size + rank;
    const std::size_t slots_base = static_cast<std::size_t>(reduction) * p.groups * slot_floats;
    float* mine = p.workspace + slots_base + group * slot_floats;
#pragma unroll 4
    for (int item = static_cast<int>(threadIdx.x); item < items; item += kThreads) {
      const int row = row0 + item / (kTileOut / 4), f = 4 * (item % (kTileOut / 4));
      *reinterpret_cast<float4*>(mine + 4 * item) = cluster_sum<N>(cluster, partial, row * T::partial_stride + f);
    }
    __threadfence();  // the slot is visible device-wide before the arrival is counted
    __syncthreads();
    unsigned* counter = p.counters + reduction;
    if (threadIdx.x == 0) arrival = atomicAdd(counter, 1u);
    __syncthreads();
    if (arrival == static_cast<unsigned>(p.groups - 1)) {
      __threadfence();  // every other group's slot is visible to this CTA's reads
#pragma unroll 4
      for (int item = static_cast<int>(threadIdx.x); item < items; item += kThreads) {
        const int row = row0 + item / (kTileOut / 4), f = 4 * (item % (kTileOut / 4));
        float4 sum = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
        for (int g = 0; g < p.groups; ++g) {
          const float4 v = __ldcg(reinterpret_cast<const float4*>(p.workspace + slots_base + g * slot_floats + 4 * item));
          sum.x += v.x;
          sum.y += v.y;
          sum.z += v.z;
          sum.w += v.w;
        }
        store_output(p, sum, batch0 + row, out0 + f);
      }
      if (threadIdx.x == 0) *counter = 0;  // ready for the next launch (stream-ordered)
    }
  }
  cluster.sync();  // no CTA leaves while another still reads its shared memory
#else
  (void)w_map, (void)x_map, (void)p;
  __trap();  // built for sm_90a only; the host side never launches it elsewhere
#endif
}

template <typename F>
decltype(auto) with_tile(int n, F&& f) {
  switch (n) {
    case 64:
      return f(std::integral_constant<int, 64>{});
    case 128:
      return f(std::integral_constant<int, 128>{});
    default:
      return f(std::integral_constant<int, 256>{});
  }
}

template <int N>
cudaLaunchConfig_t launch_config(int cluster, int groups, int tiles, int row_tiles, cudaStream_t stream,
                                 cudaLaunchAttribute* attribute) {
  cudaLaunchConfig_t config{};
  config.gridDim = dim3(static_cast<unsigned>(cluster * groups), static_cast<unsigned>(tiles),
                        static_cast<unsigned>(row_tiles));
  config.blockDim = dim3(kThreads, 1, 1);
  config.dynamicSmemBytes = Tile<N>::smem_bytes;
  config.stream = stream;
  attribute->id = cudaLaunchAttributeClusterDimension;
  attribute->val.clusterDim.x = static_cast<unsigned>(cluster);
  attribute->val.clusterDim.y = 1;
  attribute->val.clusterDim.z = 1;
  config.attrs = attribute;
  config.numAttrs = 1;
  return config;
}

}  // namespace

int sm90_gemm_stages(int tile_rows) {
  return with_tile(tile_rows, [](auto n) { return Tile<decltype(n)::value>::stages; });
}

cudaError_t sm90_gemm_max_active_clusters(int tile_rows, int cluster, int* clusters) {
  return with_tile(tile_rows, [&](auto n) {
    constexpr int N = decltype(n)::value;
    const cudaError_t e =
        cudaFuncSetAttribute(sm90_gemm_kernel<N>, cudaFuncAttributeMaxDynamicSharedMemorySize, Tile<N>::smem_bytes);
    if (e != cudaSuccess) return e;
    cudaLaunchAttribute attribute{};
    const cudaLaunchConfig_t config = launch_config<N>(cluster, 1, 1, 1, nullptr, &attribute);
    return cudaOccupancyMaxActiveClusters(clusters, sm90_gemm_kernel<N>, &config);
  });
}

cudaError_t sm90_gemm_launch(const CUtensorMap& w_map, const CUtensorMap& x_map, const Sm90GemmLaunch& l,
                             cudaStream_t stream) {
  return with_tile(l.tile_rows, [&](auto n) {
    constexpr int N = decltype(n)::value;
    cudaLaunchAttribute attribute{};
    const int row_tiles = (l.rows + N - 1) / N;
    const cudaLaunchConfig_t config =
        launch_config<N>(l.cluster, l.groups, l.out / kTileOut, row_tiles, stream, &attribute);
    return cudaLaunchKernelEx(&config, sm90_gemm_kernel<N>, w_map, x_map, l);
  });
}

}  // namespace streampipe::serving::detail
