// SPDX-License-Identifier: Apache-2.0
#pragma once
// What the GPU's PNG encoder (gpu_png_encoder.cpp) and its kernels (gpu_png_kernels.cu)
// exchange through device memory. Positions are an image's filtered bytes (per row the
// filter byte, then the residuals), counted from 0; tiles of kPngTileBytes split each image,
// whole tiles make its deflate blocks of kDeflateBlockBytes. Bits are counted from the start
// of the batch's output buffer, least significant bit of each byte first.

#include "deflate_block_code.hpp"

#include <cstdint>

namespace streampipe::io::detail {

inline constexpr std::uint32_t kPngTileBytes = 4096;
inline constexpr std::uint32_t kPngTileThreads = 256;  // 16 positions each
inline constexpr std::uint32_t kPngTilesPerBlock = static_cast<std::uint32_t>(kDeflateBlockBytes / kPngTileBytes);
// A block's histogram and code table: the 256 literals, then run lengths 3-258 at 256 + length - 3.
inline constexpr std::uint32_t kPngBins = 512;
// The filtered bytes of an image, at most: positions and bit counts within it fit 32 bits.
inline constexpr std::uint64_t kPngMaxFiltered = std::uint64_t{1} << 31;

static_assert(kDeflateBlockBytes % kPngTileBytes == 0, "blocks are whole tiles");

struct PngImageDesc {
  const std::uint8_t* pixels;  // device memory, rows `pitch` bytes apart
  std::uint64_t pitch;
  std::uint64_t filtered_at;   // its filtered bytes in the batch's buffer (16-byte aligned)
  std::uint32_t width, height;
  std::uint32_t length;        // filtered bytes: height * (width + 1)
  std::uint32_t first_tile;    // of the batch's tiles
  std::uint32_t first_block;   // of the batch's blocks
  std::uint32_t unused;
};

// A tile's first and last segment start (deflate_run_parse.hpp), -1 where it has none.
struct PngTileStarts {
  std::int32_t first, last;
};

// Filled by the kernels (zeroed first): histogram as kPngBins says; `sum` of the block's
// bytes and `weighted`, the sum of each byte times the bytes from it to the block's end
// (itself included): the block's Adler-32 is (1 + sum, length + weighted) modulo 65521.
struct PngBlockStats {
  std::uint32_t histogram[kPngBins];
  unsigned long long sum, weighted;
};

// Where the host placed a block, and its codes: `codes` holds kPngBins entries per block,
// each the bits to write (the length's code with its extra bits, then distance code 0,
// a zero bit) in the low 24 bits and their count above.
struct PngBlockPlan {
  unsigned long long first_bit;  // of its header
  unsigned long long end_bit;    // one past its end-of-block code
  std::uint32_t header_bits;
  std::uint32_t header_word;     // its header in the header words, from here
  std::uint32_t end_of_block;    // as a code entry
  std::uint32_t unused;
};

inline constexpr std::uint32_t code_entry(std::uint32_t bits, std::uint32_t count) { return bits | count << 24; }

}  // namespace streampipe::io::detail
