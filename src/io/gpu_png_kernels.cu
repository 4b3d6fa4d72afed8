// SPDX-License-Identifier: Apache-2.0
// The GPU PNG encoder's kernels (see gpu_png_kernels.hpp). One thread block per tile of
// 4096 filtered bytes, 16 consecutive positions per thread. A tile parses its positions with
// parsed_at (deflate_run_parse.hpp), for which each position needs its segment's start and
// end: within the tile from block-wide scans of the threads' first and last starts, beyond
// it from the neighbouring tiles' starts (png_filter's), looked up by one warp up to the
// block's edges, which are segment starts themselves.

#include "gpu_png_kernels.hpp"

#include "deflate_run_parse.hpp"

#include "streampipe/cuda/launch.hpp"

#include <cub/block/block_reduce.cuh>
#include <cub/block/block_scan.cuh>

#include <climits>

namespace streampipe::io::detail {
namespace {

constexpr std::uint32_t kPer = kPngTileBytes / kPngTileThreads;
constexpr std::uint32_t kBlockBytes = static_cast<std::uint32_t>(kDeflateBlockBytes);
// A tile's bits at most: 15 per literal (a run's 21 cover at least 3 bytes), from any bit of a word.
constexpr std::uint32_t kStagedWords = (31 + 15 * kPngTileBytes) / 32 + 1;
static_assert(kPer == 16, "a thread's positions are one 16-byte load");
constexpr unsigned long long kUnplaced = ~0ull;  // a tile of a block that came out other than planned

__device__ std::uint32_t tiles_of(const PngImageDesc& d) { return (d.length + kPngTileBytes - 1) / kPngTileBytes; }

// The image of the batch's tile (by_block false) or block (true): the last whose first is <= it.
__device__ std::uint32_t image_of(const PngBatch& batch, std::uint32_t index, bool by_block) {
  std::uint32_t lo = 0, hi = batch.image_count;
  while (hi - lo > 1) {
    const std::uint32_t mid = (lo + hi) / 2;
    const std::uint32_t first = by_block ? batch.images[mid].first_block : batch.images[mid].first_tile;
    if (first <= index) lo = mid;
    else hi = mid;
  }
  return lo;
}

// The filter byte of a row (2: up) or the residual of a pixel and the one above it.
__device__ std::uint8_t filtered_at(const PngImageDesc& d, std::uint32_t p) {
  const std::uint32_t row = d.width + 1, y = p / row, x = p - y * row;
  if (x == 0) return 2;
  const std::uint8_t* at = d.pixels + std::size_t{y} * d.pitch + (x - 1);
  return y == 0 ? *at : static_cast<std::uint8_t>(*at - *(at - d.pitch));
}

// Where a tile lies: its image, its block, and the thread's first position.
struct TileView {
  PngImageDesc d;
  std::uint32_t tile_in_image, block, block_end, p0;
  const std::uint8_t* bytes;  // the image's filtered bytes
};

__device__ TileView view_tile(const PngBatch& batch, std::uint32_t tile) {
  TileView v;
  v.d = batch.images[image_of(batch, tile, false)];
  v.tile_in_image = tile - v.d.first_tile;
  v.block = v.d.first_block + v.tile_in_image / kPngTilesPerBlock;
  v.block_end = min((v.tile_in_image / kPngTilesPerBlock + 1) * kBlockBytes, v.d.length);
  v.p0 = v.tile_in_image * kPngTileBytes + threadIdx.x * kPer;
  v.bytes = batch.filtered + v.d.filtered_at;
  return v;
}

__device__ bool is_start(std::uint32_t p, std::uint8_t before, std::uint8_t here) {
  return p % kBlockBytes == 0 || before != here;
}

__global__ void filter_kernel(PngBatch batch) {
  __shared__ int first, last;
  if (threadIdx.x == 0) first = INT_MAX, last = -1;
  __syncthreads();
  const TileView t = view_tile(batch, blockIdx.x);
  const PngImageDesc& d = t.d;
  if (t.p0 < d.length) {
    const std::uint32_t row = d.width + 1;
    std::uint32_t y = t.p0 / row, x = t.p0 - y * row;
    std::uint8_t before = t.p0 > 0 ? filtered_at(d, t.p0 - 1) : 0;
    std::uint32_t words[kPer / 4] = {};
    unsigned starts = 0;
#pragma unroll
    for (std::uint32_t j = 0; j < kPer; ++j) {
      const std::uint32_t p = t.p0 + j;
      if (p >= d.length) break;
      std::uint8_t b = 2;
      if (x > 0) {
        const std::uint8_t* at = d.pixels + std::size_t{y} * d.pitch + (x - 1);
        b = y == 0 ? *at : static_cast<std::uint8_t>(*at - *(at - d.pitch));
      }
      words[j / 4] |= std::uint32_t{b} << (8 * (j % 4));
      if (is_start(p, before, b)) starts |= 1u << j;
      before = b;
      if (++x == row) x = 0, ++y;
    }
    *reinterpret_cast<uint4*>(batch.filtered + d.filtered_at + t.p0) = make_uint4(words[0], words[1], words[2], words[3]);
    if (starts != 0) {
      atomicMin(&first, static_cast<int>(t.p0 + static_cast<std::uint32_t>(__ffs(starts) - 1)));
      atomicMax(&last, static_cast<int>(t.p0 + 31 - static_cast<std::uint32_t>(__clz(starts))));
    }
  }
  __syncthreads();
  if (threadIdx.x == 0) batch.starts[blockIdx.x] = {first == INT_MAX ? -1 : first, last};
}

// The nearest segment start before the tile (back true; -1 for a block's first tile) or
// after it (the block's end if none) within the tile's block. Warp 0 looks, 32 tiles a step.
__device__ std::int32_t nearest_start(const PngBatch& batch, const TileView& t, bool back) {
  const std::uint32_t lane = threadIdx.x % 32;
  const std::uint32_t block_first = t.tile_in_image / kPngTilesPerBlock * kPngTilesPerBlock;
  const std::uint32_t block_last = min(block_first + kPngTilesPerBlock, tiles_of(t.d)) - 1;
  const std::uint32_t span = back ? t.tile_in_image - block_first : block_last - t.tile_in_image;
  for (std::uint32_t step = 0; step < span; step += 32) {
    const std::uint32_t distance = step + lane + 1;
    std::int32_t found = -1;
    if (distance <= span) {
      const PngTileStarts s = batch.starts[t.d.first_tile + (back ? t.tile_in_image - distance : t.tile_in_image + distance)];
      found = back ? s.last : s.first;
    }
    const unsigned hits = __ballot_sync(0xffffffffu, found >= 0);
    if (hits != 0) return __shfl_sync(0xffffffffu, found, __ffs(hits) - 1);
  }
  return back ? -1 : static_cast<std::int32_t>(t.block_end);
}

using IntScan = cub::BlockScan<std::int32_t, kPngTileThreads>;
struct Larger {
  __device__ std::int32_t operator()(std::int32_t a, std::int32_t b) const { return a > b ? a : b; }
};
struct Smaller {
  __device__ std::int32_t operator()(std::int32_t a, std::int32_t b) const { return a < b ? a : b; }
};

// The thread's 16 bytes and the parse of each (parsed_at; kParsedInside past the image).
__device__ void parse_tile(const PngBatch& batch, const TileView& t, std::uint8_t (&v)[kPer], std::int32_t (&step)[kPer]) {
  __shared__ typename IntScan::TempStorage scan;
  __shared__ std::int32_t outside[2];
  __shared__ std::int32_t reversed[kPngTileThreads];
  if (threadIdx.x < 32) {
    const std::int32_t before = nearest_start(batch, t, true), after = nearest_start(batch, t, false);
    if (threadIdx.x == 0) outside[0] = before, outside[1] = after;
  }
  const bool inside = t.p0 < t.d.length;
  const uint4 q = inside ? *reinterpret_cast<const uint4*>(t.bytes + t.p0) : make_uint4(0, 0, 0, 0);
  const std::uint32_t words[4] = {q.x, q.y, q.z, q.w};
#pragma unroll
  for (std::uint32_t j = 0; j < kPer; ++j) v[j] = static_cast<std::uint8_t>(words[j / 4] >> (8 * (j % 4)));
  const std::uint8_t before = inside && t.p0 > 0 ? t.bytes[t.p0 - 1] : 0;
  unsigned starts = 0;
#pragma unroll
  for (std::uint32_t j = 0; j < kPer; ++j)
    if (t.p0 + j < t.d.length && is_start(t.p0 + j, j == 0 ? before : v[j - 1], v[j])) starts |= 1u << j;
  const std::int32_t my_first = starts ? static_cast<std::int32_t>(t.p0) + __ffs(starts) - 1 : INT_MAX;
  const std::int32_t my_last = starts ? static_cast<std::int32_t>(t.p0) + 31 - __clz(starts) : -1;
  __syncthreads();  // outside[] is written
  std::int32_t g = 0, next = 0;
  IntScan(scan).ExclusiveScan(my_last, g, outside[0], Larger());
  // The first start after each thread's positions: a scan over the threads in reverse.
  reversed[threadIdx.x] = my_first;
  __syncthreads();
  const std::int32_t mirrored = reversed[kPngTileThreads - 1 - threadIdx.x];
  __syncthreads();
  IntScan(scan).ExclusiveScan(mirrored, next, outside[1], Smaller());
  reversed[kPngTileThreads - 1 - threadIdx.x] = next;
  __syncthreads();
  next = reversed[threadIdx.x];
  // Whether the segment the thread starts in begins with a new byte (needed unless its
  // first position starts one itself).
  bool fresh = g == 0;
  if (g > 0 && (starts & 1u) == 0) fresh = t.bytes[g - 1] != t.bytes[g];
  std::uint32_t next_after[kPer];
#pragma unroll
  for (int j = kPer - 1; j >= 0; --j) {
    next_after[j] = static_cast<std::uint32_t>(next);
    if (starts >> j & 1u) next = static_cast<std::int32_t>(t.p0) + j;
  }
#pragma unroll
  for (std::uint32_t j = 0; j < kPer; ++j) {
    const std::uint32_t p = t.p0 + j;
    if (p >= t.d.length) {
      step[j] = kParsedInside;
      continue;
    }
    if (starts >> j & 1u) {
      g = static_cast<std::int32_t>(p);
      fresh = p == 0 || (j == 0 ? before : v[j - 1]) != v[j];
    }
    step[j] = parsed_at(p, static_cast<std::uint32_t>(g), next_after[j], fresh);
  }
}

// The code entry (gpu_png_layout.hpp) of a parsed position, 0 inside a run.
__device__ std::uint32_t entry_of(const std::uint32_t* table, std::uint8_t byte, std::int32_t step) {
  if (step == kParsedLiteral) return table[byte];
  return step > 0 ? table[256 + step - kMinRun] : 0;
}

__global__ void count_kernel(PngBatch batch, PngBlockStats* stats) {
  __shared__ std::uint32_t histogram[kPngBins];
  using Reduce = cub::BlockReduce<unsigned long long, kPngTileThreads>;
  __shared__ typename Reduce::TempStorage reduce;
  for (std::uint32_t i = threadIdx.x; i < kPngBins; i += kPngTileThreads) histogram[i] = 0;
  const TileView t = view_tile(batch, blockIdx.x);
  std::uint8_t v[kPer];
  std::int32_t step[kPer];
  parse_tile(batch, t, v, step);  // synchronizes: histogram[] is zeroed
  unsigned long long sum = 0, weighted = 0;
#pragma unroll
  for (std::uint32_t j = 0; j < kPer; ++j) {
    const std::uint32_t p = t.p0 + j;
    if (p >= t.d.length) break;
    if (step[j] == kParsedLiteral) atomicAdd(&histogram[v[j]], 1u);
    if (step[j] > 0) atomicAdd(&histogram[256 + step[j] - kMinRun], 1u);
    sum += v[j];
    weighted += static_cast<unsigned long long>(t.block_end - p) * v[j];
  }
  __syncthreads();
  PngBlockStats& s = stats[t.block];
  for (std::uint32_t i = threadIdx.x; i < kPngBins; i += kPngTileThreads)
    if (histogram[i] != 0) atomicAdd(&s.histogram[i], histogram[i]);
  sum = Reduce(reduce).Sum(sum);
  __syncthreads();
  weighted = Reduce(reduce).Sum(weighted);
  if (threadIdx.x == 0) {
    atomicAdd(&s.sum, sum);
    atomicAdd(&s.weighted, weighted);
  }
}

// The tile's codes into shared memory, the positions parsed, each thread's entries.
__device__ std::uint32_t thread_bits(const PngBatch& batch, const std::uint32_t* codes, std::uint32_t* table,
                                     const TileView& t, std::uint32_t (&entries)[kPer]) {
  for (std::uint32_t i = threadIdx.x; i < kPngBins; i += kPngTileThreads) table[i] = codes[std::size_t{t.block} * kPngBins + i];
  std::uint8_t v[kPer];
  std::int32_t step[kPer];
  parse_tile(batch, t, v, step);  // synchronizes: table[] is loaded
  std::uint32_t bits = 0;
#pragma unroll
  for (std::uint32_t j = 0; j < kPer; ++j) {
    entries[j] = entry_of(table, v[j], step[j]);
    bits += entries[j] >> 24;
  }
  return bits;
}

__global__ void tile_bits_kernel(PngBatch batch, const std::uint32_t* codes, std::uint32_t* tile_bits) {
  __shared__ std::uint32_t table[kPngBins];
  using Reduce = cub::BlockReduce<std::uint32_t, kPngTileThreads>;
  __shared__ typename Reduce::TempStorage reduce;
  std::uint32_t entries[kPer];
  const std::uint32_t bits = thread_bits(batch, codes, table, view_tile(batch, blockIdx.x), entries);
  const std::uint32_t total = Reduce(reduce).Sum(bits);
  if (threadIdx.x == 0) tile_bits[blockIdx.x] = total;
}

// ORs `value` (nothing above its bit count) into the bit stream at `bit`.
__device__ void or_bits(std::uint32_t* out, unsigned long long bit, std::uint32_t value) {
  const unsigned long long shifted = static_cast<unsigned long long>(value) << (bit % 32);
  const auto low = static_cast<std::uint32_t>(shifted), high = static_cast<std::uint32_t>(shifted >> 32);
  if (low != 0) atomicOr(out + bit / 32, low);
  if (high != 0) atomicOr(out + bit / 32 + 1, high);
}

// One warp per block: its tiles' places, its header and end-of-block code.
__global__ void place_kernel(PngBatch batch, const PngBlockPlan* plans, const std::uint32_t* header_words,
                             const std::uint32_t* tile_bits, unsigned long long* tile_first_bit, std::uint32_t* out,
                             std::uint32_t* mismatches) {
  const std::uint32_t lane = threadIdx.x;
  const PngImageDesc d = batch.images[image_of(batch, blockIdx.x, true)];
  const PngBlockPlan plan = plans[blockIdx.x];
  const std::uint32_t first = (blockIdx.x - d.first_block) * kPngTilesPerBlock;
  const std::uint32_t count = min(kPngTilesPerBlock, tiles_of(d) - first);
  const std::uint32_t eob_bits = plan.end_of_block >> 24;
  unsigned long long bits = 0;
  for (std::uint32_t k = lane; k < count; k += 32) bits += tile_bits[d.first_tile + first + k];
#pragma unroll
  for (int offset = 16; offset > 0; offset /= 2) bits += __shfl_xor_sync(0xffffffffu, bits, offset);
  // A block longer or shorter than planned (the host's and the device's parse disagree) is
  // counted and left unwritten: its bits would overrun its place.
  const bool as_planned = plan.first_bit + plan.header_bits + bits + eob_bits == plan.end_bit;
  if (lane == 0 && !as_planned) atomicAdd(mismatches, 1u);
  unsigned long long at = plan.first_bit + plan.header_bits;
  for (std::uint32_t i = 0; i < count; i += 32) {
    const std::uint32_t k = i + lane;
    const std::uint32_t tile = k < count ? tile_bits[d.first_tile + first + k] : 0;
    unsigned long long sum = tile;  // inclusive scan over the warp
#pragma unroll
    for (int offset = 1; offset < 32; offset *= 2) {
      const unsigned long long other = __shfl_up_sync(0xffffffffu, sum, offset);
      if (lane >= static_cast<std::uint32_t>(offset)) sum += other;
    }
    if (k < count) tile_first_bit[d.first_tile + first + k] = as_planned ? at + sum - tile : kUnplaced;
    at += __shfl_sync(0xffffffffu, sum, 31);
  }
  for (std::uint32_t w = lane; w * 32 < plan.header_bits; w += 32)
    or_bits(out, plan.first_bit + 32ull * w, header_words[plan.header_word + w]);
  if (lane == 0) or_bits(out, plan.end_bit - eob_bits, plan.end_of_block & 0xffffffu);
}

__global__ void write_kernel(PngBatch batch, const std::uint32_t* codes, const std::uint32_t* tile_bits,
                             const unsigned long long* tile_first_bit, std::uint32_t* out) {
  __shared__ std::uint32_t table[kPngBins];
  __shared__ std::uint32_t staged[kStagedWords];
  using Scan = cub::BlockScan<std::uint32_t, kPngTileThreads>;
  __shared__ typename Scan::TempStorage scan;
  std::uint32_t entries[kPer];
  const std::uint32_t bits = thread_bits(batch, codes, table, view_tile(batch, blockIdx.x), entries);
  const std::uint32_t total = tile_bits[blockIdx.x];
  const unsigned long long first = tile_first_bit[blockIdx.x];
  if (total == 0 || first == kUnplaced) return;  // the whole tile inside runs, or its block failed
  const std::uint32_t shift = static_cast<std::uint32_t>(first % 32);
  const std::uint32_t words = (shift + total + 31) / 32;
  for (std::uint32_t w = threadIdx.x; w < words; w += kPngTileThreads) staged[w] = 0;
  __syncthreads();  // staged[] is zeroed
  std::uint32_t at = 0;
  Scan(scan).ExclusiveSum(bits, at);
  at += shift;
#pragma unroll
  for (std::uint32_t j = 0; j < kPer; ++j) {
    const std::uint32_t count = entries[j] >> 24;
    if (count == 0) continue;
    or_bits(staged, at, entries[j] & 0xffffffu);
    at += count;
  }
  __syncthreads();
  // Words shared with the neighbouring tiles or a block's header are ORed in, the others stored.
  std::uint32_t* base = out + first / 32;
  for (std::uint32_t w = threadIdx.x; w < words; w += kPngTileThreads) {
    const std::uint32_t value = staged[w];
    if (w == 0 || w + 1 == words) {
      if (value != 0) atomicOr(base + w, value);
    } else {
      base[w] = value;
    }
  }
}

LaunchConfig per_tile(const PngBatch& batch) {
  LaunchConfig c;
  c.grid = dim3(batch.tiles);
  c.block = dim3(kPngTileThreads);
  return c;
}

}  // namespace

void png_filter(StreamRef stream, const PngBatch& batch) { launch(stream, per_tile(batch), filter_kernel, batch); }

void png_count(StreamRef stream, const PngBatch& batch, PngBlockStats* stats) {
  launch(stream, per_tile(batch), count_kernel, batch, stats);
}

void png_tile_bits(StreamRef stream, const PngBatch& batch, const std::uint32_t* codes, std::uint32_t* tile_bits) {
  launch(stream, per_tile(batch), tile_bits_kernel, batch, codes, tile_bits);
}

void png_place(StreamRef stream, const PngBatch& batch, const PngBlockPlan* plans, const std::uint32_t* header_words,
               const std::uint32_t* tile_bits, unsigned long long* tile_first_bit, std::uint32_t* out,
               std::uint32_t* mismatches) {
  LaunchConfig c;
  c.grid = dim3(batch.blocks);
  c.block = dim3(32);
  launch(stream, c, place_kernel, batch, plans, header_words, tile_bits, tile_first_bit, out, mismatches);
}

void png_write(StreamRef stream, const PngBatch& batch, const std::uint32_t* codes, const std::uint32_t* tile_bits,
               const unsigned long long* tile_first_bit, std::uint32_t* out) {
  launch(stream, per_tile(batch), write_kernel, batch, codes, tile_bits, tile_first_bit, out);
}

}  // namespace streampipe::io::detail
