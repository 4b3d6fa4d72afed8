// SPDX-License-Identifier: Apache-2.0
#pragma once
// The GPU PNG encoder's kernels (gpu_png_kernels.cu), each over a whole batch of images;
// gpu_png_encoder.cpp enqueues them in this order. Layout: gpu_png_layout.hpp.

#include "gpu_png_layout.hpp"

#include "streampipe/cuda/stream.hpp"

#include <cstdint>

namespace streampipe::io::detail {

struct PngBatch {
  const PngImageDesc* images;  // device memory, by first_tile and first_block ascending
  std::uint32_t image_count;
  std::uint32_t tiles;         // of all images
  std::uint32_t blocks;        // of all images
  std::uint8_t* filtered;      // the images' filtered bytes
  PngTileStarts* starts;       // per tile
};

// Filters every image (up, the filter byte per row) into `filtered` and finds each tile's
// segment starts.
void png_filter(StreamRef stream, const PngBatch& batch);
// Adds each block's literals, runs and checksum sums into `stats` (zeroed before).
void png_count(StreamRef stream, const PngBatch& batch, PngBlockStats* stats);
// Each tile's bits with the codes the host fitted (`codes`: kPngBins per block).
void png_tile_bits(StreamRef stream, const PngBatch& batch, const std::uint32_t* codes, std::uint32_t* tile_bits);
// Places each tile's bits after its block's header and writes the headers and end-of-block
// codes into `out` (zeroed before). Counts into `mismatches` the blocks whose bits differ
// from what the host planned (never, unless the two disagree on the parse), whose tiles
// png_write then leaves out rather than write past the block's place.
void png_place(StreamRef stream, const PngBatch& batch, const PngBlockPlan* plans, const std::uint32_t* header_words,
               const std::uint32_t* tile_bits, unsigned long long* tile_first_bit, std::uint32_t* out,
               std::uint32_t* mismatches);
// Writes every tile's symbols at its place.
void png_write(StreamRef stream, const PngBatch& batch, const std::uint32_t* codes, const std::uint32_t* tile_bits,
               const unsigned long long* tile_first_bit, std::uint32_t* out);

}  // namespace streampipe::io::detail
