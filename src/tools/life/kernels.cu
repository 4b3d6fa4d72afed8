// SPDX-License-Identifier: Apache-2.0
// The three Life kernels and their helpers. Every kernel wraps toroidally and handles any
// width and height >= 1 (tiles and words that run past the edge are clipped or masked).
// The bit-packed one advances up to 8 generations per launch (temporal.hpp).

#include "kernels.hpp"

#include "temporal_step.hpp"
#include "streampipe/cuda/launch.hpp"
#include "streampipe/tools/life/bitpacked.hpp"

#include <algorithm>
#include <bit>
#include <optional>
#include <stdexcept>
#include <utility>

namespace streampipe::tools::life::detail {
namespace {

// ---- 1. the lesson's kernel: one thread per cell, neighbours from global memory --------

__global__ void global_kernel(const std::uint8_t* __restrict__ in, std::uint8_t* __restrict__ out,
                              std::uint32_t width, std::uint32_t height) {
  const std::uint32_t x = blockIdx.x * blockDim.x + threadIdx.x;
  const std::uint32_t y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= width || y >= height) return;
  const std::size_t w = width;
  const std::size_t l = x == 0 ? width - 1 : x - 1, r = x + 1 == width ? 0 : x + 1;
  const std::size_t up = (y == 0 ? height - 1 : y - 1) * w, mid = std::size_t{y} * w,
                    down = (y + 1 == height ? 0 : y + 1) * w;
  const unsigned n = in[up + l] + in[up + x] + in[up + r] + in[mid + l] + in[mid + r] + in[down + l] +
                     in[down + x] + in[down + r];
  out[mid + x] = (n == 3 || (n == 2 && in[mid + x] != 0)) ? 1 : 0;
}

// ---- 2. shared-memory tiles with a one-cell halo ---------------------------------------

constexpr int kTileX = 32, kTileY = 8;

__global__ void shared_kernel(const std::uint8_t* __restrict__ in, std::uint8_t* __restrict__ out,
                              std::uint32_t width, std::uint32_t height) {
  __shared__ std::uint8_t tile[kTileY + 2][kTileX + 2];
  const int tid = threadIdx.y * kTileX + threadIdx.x;
  const long long x0 = static_cast<long long>(blockIdx.x) * kTileX - 1;
  const long long y0 = static_cast<long long>(blockIdx.y) * kTileY - 1;
  // The whole block loads the tile and its halo; coordinates wrap, also for boards smaller
  // than a tile (a cell then appears more than once, as the torus demands).
  for (int i = tid; i < (kTileX + 2) * (kTileY + 2); i += kTileX * kTileY) {
    const int lx = i % (kTileX + 2), ly = i / (kTileX + 2);
    long long gx = x0 + lx, gy = y0 + ly;
    gx = ((gx % width) + width) % width;
    gy = ((gy % height) + height) % height;
    tile[ly][lx] = in[static_cast<std::size_t>(gy) * width + static_cast<std::size_t>(gx)];
  }
  __syncthreads();
  const std::uint32_t x = blockIdx.x * kTileX + threadIdx.x, y = blockIdx.y * kTileY + threadIdx.y;
  if (x >= width || y >= height) return;
  const int tx = threadIdx.x + 1, ty = threadIdx.y + 1;
  const unsigned n = tile[ty - 1][tx - 1] + tile[ty - 1][tx] + tile[ty - 1][tx + 1] + tile[ty][tx - 1] +
                     tile[ty][tx + 1] + tile[ty + 1][tx - 1] + tile[ty + 1][tx] + tile[ty + 1][tx + 1];
  out[std::size_t{y} * width + x] = (n == 3 || (n == 2 && tile[ty][tx] != 0)) ? 1 : 0;
}

// ---- 3. bit-packed: 64 cells per word, K generations per launch --------------------------
// (temporal_step.hpp: one warp's work, shared with the host emulation)

struct DeviceWarp {
  using U = std::uint32_t;
  __device__ static Lanes<U> setup(const TemporalPlan& p, std::uint32_t column) {
    const LaneSetup s = lane_setup(p, column, threadIdx.x & 31u);
    return {s.word, s.west_src, s.east_src, s.useful, s.mask_lo, s.mask_hi, s.send_shift, s.send_shift2, s.fix_lo,
            s.fix_hi};
  }
  __device__ static U shfl(U v, U src) { return __shfl_sync(0xffffffffu, v, static_cast<int>(src)); }
  __device__ static Pair<U> load(const std::uint64_t* row, const Lanes<U>& l) {
    const uint2 v = __ldg(reinterpret_cast<const uint2*>(row) + l.word);
    return {v.x, v.y};
  }
  __device__ static void store(std::uint64_t* row, const Lanes<U>& l, const Pair<U>& v) {
    if (l.useful != 0) reinterpret_cast<uint2*>(row)[l.word] = make_uint2(v.lo, v.hi);
  }
  __device__ static void add_count(unsigned long long* counter, U v) {
    for (int offset = 16; offset > 0; offset /= 2) v += __shfl_xor_sync(0xffffffffu, v, offset);
    if ((threadIdx.x & 31u) == 0 && v != 0) atomicAdd(counter, static_cast<unsigned long long>(v));
  }
};

template <int K, bool Masked, bool Count>
__global__ void __launch_bounds__(kTemporalBlockThreads, temporal_min_blocks(K))
    temporal_kernel(TemporalPlan plan, const std::uint64_t* __restrict__ in, std::uint64_t* __restrict__ out,
                    unsigned long long* counts) {
  const std::uint32_t warp = (blockIdx.x * kTemporalBlockThreads + threadIdx.x) / 32;
  if (warp >= plan.warps) return;  // whole warps: the block size is a multiple of 32
  advance_warp<K, Masked, Count, DeviceWarp>(plan, in, out, counts, warp);
}

using TemporalKernel = void (*)(TemporalPlan, const std::uint64_t*, std::uint64_t*, unsigned long long*);

template <int K>
TemporalKernel temporal_variant(bool masked, bool count) {
  if (masked) return count ? temporal_kernel<K, true, true> : temporal_kernel<K, true, false>;
  return count ? temporal_kernel<K, false, true> : temporal_kernel<K, false, false>;
}

TemporalKernel temporal_variant(unsigned k, bool masked, bool count) {
  switch (k) {
    case 1: return temporal_variant<1>(masked, count);
    case 2: return temporal_variant<2>(masked, count);
    case 4: return temporal_variant<4>(masked, count);
    case 8: return temporal_variant<8>(masked, count);
    default: throw std::invalid_argument("generations per launch must be 1, 2, 4 or 8");
  }
}

// ---- helpers ---------------------------------------------------------------------------

__global__ void pack_kernel(const std::uint8_t* __restrict__ bytes, std::uint64_t* __restrict__ words,
                            std::uint32_t width, std::uint32_t height, std::uint32_t nw) {
  const std::uint64_t t = std::uint64_t{blockIdx.x} * blockDim.x + threadIdx.x;
  if (t >= std::uint64_t{nw} * height) return;
  const auto k = static_cast<std::uint32_t>(t % nw);
  const auto y = static_cast<std::uint32_t>(t / nw);
  const std::uint32_t x0 = k * 64, n = min(64u, width - x0);
  const std::uint8_t* src = bytes + std::size_t{y} * width + x0;
  std::uint64_t w = 0;
  for (std::uint32_t b = 0; b < n; ++b) w |= std::uint64_t{src[b] != 0} << b;
  words[t] = w;
}

__global__ void unpack_kernel(const std::uint64_t* __restrict__ words, std::uint8_t* __restrict__ bytes,
                              std::uint32_t width, std::uint32_t height, std::uint32_t nw) {
  const std::uint64_t i = std::uint64_t{blockIdx.x} * blockDim.x + threadIdx.x;
  if (i >= std::uint64_t{width} * height) return;
  const auto y = static_cast<std::uint32_t>(i / width), x = static_cast<std::uint32_t>(i % width);
  bytes[i] = static_cast<std::uint8_t>((words[std::size_t{y} * nw + x / 64] >> (x % 64)) & 1u);
}

__global__ void random_kernel(std::uint8_t* __restrict__ bytes, std::uint64_t cells, std::uint64_t seed,
                              std::uint64_t threshold) {
  const std::uint64_t stride = std::uint64_t{gridDim.x} * blockDim.x;
  for (std::uint64_t i = std::uint64_t{blockIdx.x} * blockDim.x + threadIdx.x; i < cells; i += stride)
    bytes[i] = random_cell(seed, i, threshold) ? 1 : 0;
}

__device__ __forceinline__ void block_add(unsigned long long v, unsigned long long* count) {
  for (int offset = 16; offset > 0; offset /= 2) v += __shfl_down_sync(0xffffffffu, v, offset);
  if ((threadIdx.x & 31) == 0 && v != 0) atomicAdd(count, v);
}

__global__ void count_bytes_kernel(const std::uint8_t* __restrict__ bytes, std::uint64_t cells,
                                   unsigned long long* count) {
  const std::uint64_t stride = std::uint64_t{gridDim.x} * blockDim.x;
  unsigned long long v = 0;
  for (std::uint64_t i = std::uint64_t{blockIdx.x} * blockDim.x + threadIdx.x; i < cells; i += stride)
    v += bytes[i];
  block_add(v, count);
}

__global__ void count_words_kernel(const std::uint64_t* __restrict__ words, std::uint64_t n,
                                   unsigned long long* count) {
  const std::uint64_t stride = std::uint64_t{gridDim.x} * blockDim.x;
  unsigned long long v = 0;
  for (std::uint64_t i = std::uint64_t{blockIdx.x} * blockDim.x + threadIdx.x; i < n; i += stride)
    v += static_cast<unsigned long long>(__popcll(words[i]));
  block_add(v, count);
}

__global__ void scatter_kernel(const std::uint64_t* __restrict__ counts, std::uint32_t universes,
                               std::uint64_t generations, const pipeline::ItemDescriptor* __restrict__ items,
                               std::byte* __restrict__ out, std::size_t at) {
  const std::uint64_t total = generations * universes;
  const std::uint64_t stride = std::uint64_t{gridDim.x} * blockDim.x;
  for (std::uint64_t i = std::uint64_t{blockIdx.x} * blockDim.x + threadIdx.x; i < total; i += stride) {
    const std::uint64_t u = i / generations, g = i % generations;
    reinterpret_cast<std::uint64_t*>(out + items[u].out_offset + at)[g] = counts[g * universes + u];
  }
}

LaunchConfig tiles(const Device& device, std::uint32_t width, std::uint32_t height, unsigned bx, unsigned by) {
  LaunchConfig cfg;
  cfg.block = dim3(bx, by, 1);
  cfg.grid = dim3((width + bx - 1) / bx, (height + by - 1) / by, 1);
  validate(cfg, device);  // a board taller than 65535 x 8 rows is refused with the limit named
  return cfg;
}

}  // namespace

void step_global(StreamRef stream, const std::uint8_t* in, std::uint8_t* out, std::uint32_t width,
                 std::uint32_t height) {
  launch(stream, tiles(stream.device(), width, height, 32, 8), global_kernel, in, out, width, height);
}

void step_shared(StreamRef stream, const std::uint8_t* in, std::uint8_t* out, std::uint32_t width,
                 std::uint32_t height) {
  launch(stream, tiles(stream.device(), width, height, kTileX, kTileY), shared_kernel, in, out, width, height);
}

ResidentWarps bitpacked_resident_warps(const Device& device) {
  const CurrentDeviceGuard on_device(device);
  ResidentWarps warps{};
  for (unsigned i = 0; i < warps.size(); ++i) {
    int blocks = 0;
    // The variant with the most registers: the others fit at least as many blocks.
    SP_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
        &blocks, reinterpret_cast<const void*>(temporal_variant(1u << i, true, true)),
        static_cast<int>(kTemporalBlockThreads), 0));
    warps[i] = static_cast<std::uint32_t>(std::max(blocks, 1)) * (kTemporalBlockThreads / 32) *
               static_cast<std::uint32_t>(device.multiprocessors());
  }
  return warps;
}

std::uint64_t step_bitpacked(StreamRef stream, std::uint64_t* a, std::uint64_t* b, const BitpackedShape& shape,
                             std::uint64_t generations, unsigned long long* counts) {
  const unsigned most = temporal_generations(shape.width, shape.generations_per_launch);
  const bool masked = shape.width % 64 != 0;
  std::optional<TemporalPlan> plans[4];  // by log2 of the launch's generations
  std::uint64_t launches = 0;
  for (std::uint64_t done = 0; done < generations; ++launches) {
    const unsigned k = launch_generations(generations - done, most);
    auto& plan = plans[std::countr_zero(k)];
    if (!plan)
      plan = plan_temporal(shape.width, shape.height, shape.universes, shape.resident_warps[std::countr_zero(k)], k,
                           shape.strip_rows);
    LaunchConfig cfg;
    cfg.block = dim3(kTemporalBlockThreads, 1, 1);
    cfg.grid = dim3(static_cast<unsigned>((std::uint64_t{plan->warps} * 32 + kTemporalBlockThreads - 1) /
                                          kTemporalBlockThreads),
                    1, 1);
    launch(stream, cfg, temporal_variant(k, masked, counts != nullptr), *plan, a, b,
           counts != nullptr ? counts + done * shape.universes : nullptr);
    std::swap(a, b);
    done += k;
  }
  return launches;
}

void pack(StreamRef stream, const std::uint8_t* bytes, std::uint64_t* words, std::uint32_t width,
          std::uint32_t height) {
  const std::uint32_t nw = bitpacked::words_per_row(width);
  launch(stream, LaunchConfig::for_elements(stream.device(), std::uint64_t{nw} * height, 256), pack_kernel,
         bytes, words, width, height, nw);
}

void unpack(StreamRef stream, const std::uint64_t* words, std::uint8_t* bytes, std::uint32_t width,
            std::uint32_t height) {
  launch(stream, LaunchConfig::for_elements(stream.device(), std::uint64_t{width} * height, 256), unpack_kernel,
         words, bytes, width, height, bitpacked::words_per_row(width));
}

void fill_random_bytes(StreamRef stream, std::uint8_t* bytes, std::uint64_t cells, std::uint64_t seed,
                       std::uint64_t threshold) {
  launch(stream, LaunchConfig::for_elements(stream.device(), cells, 256, 1, 16), random_kernel, bytes, cells,
         seed, threshold);
}

void count_bytes(StreamRef stream, const std::uint8_t* bytes, std::uint64_t cells, unsigned long long* count) {
  launch(stream, LaunchConfig::for_elements(stream.device(), cells, 256, 1, 8), count_bytes_kernel, bytes, cells,
         count);
}

void count_words(StreamRef stream, const std::uint64_t* words, std::uint64_t n, unsigned long long* count) {
  launch(stream, LaunchConfig::for_elements(stream.device(), n, 256, 1, 8), count_words_kernel, words, n, count);
}

void scatter_populations(StreamRef stream, const std::uint64_t* counts, std::uint32_t universes,
                         std::uint64_t generations, const pipeline::ItemDescriptor* items, std::byte* out,
                         std::size_t at) {
  launch(stream, LaunchConfig::for_elements(stream.device(), generations * universes, 256, 1, 8), scatter_kernel,
         counts, universes, generations, items, out, at);
}

}  // namespace streampipe::tools::life::detail
