// SPDX-License-Identifier: Apache-2.0
#pragma once
// The GPU PNG encoder's host step between its two device passes: from each block's
// statistics (gpu_png_layout.hpp) the same codes and headers deflate_runs would write
// (deflate_block_code.hpp), how many bits each block takes and so where it starts, the
// image's Adler-32, and the tables the device writes the bits from.

#include "gpu_png_layout.hpp"

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace streampipe::io::detail {

// The symbol counts deflate_runs' block would have: literals, each run length's symbol,
// and the end of block.
[[nodiscard]] SymbolCounts symbol_counts(const PngBlockStats& stats);

// The Adler-32 (starting from 1) of a block of `length` bytes with these statistics.
[[nodiscard]] std::uint32_t block_adler(const PngBlockStats& stats, std::uint32_t length);

// An image of `length` filtered bytes, from its blocks' statistics (one per kDeflateBlockBytes).
struct PngImagePlan {
  std::vector<BlockCode> blocks;
  std::vector<std::uint64_t> block_bits;
  std::uint64_t deflate_bits = 0;
  std::uint32_t adler = 1;  // of the whole image's filtered bytes
  // The zlib stream: 2 header bytes, the blocks padded to a byte, the Adler-32.
  [[nodiscard]] std::size_t zlib_bytes() const noexcept { return 2 + (deflate_bits + 7) / 8 + 4; }
};
[[nodiscard]] PngImagePlan plan_png_image(std::span<const PngBlockStats> stats, std::uint32_t length);

// A block header's 32-bit words at most: 17 bits of counts, 19 code-length codes of 3 bits,
// and at most 288 code lengths of 7 bits with 7 extra bits each.
inline constexpr std::size_t kMaxHeaderWords = (17 + 19 * 3 + 288 * 14 + 31) / 32;

// `block` for the device, its header starting at `first_bit`: its kPngBins code entries
// into `codes`, its header appended to `header_words` (LSB first, from bit 0 of the first
// word appended), its place into `plan`.
void pack_block(const BlockCode& block, std::uint64_t first_bit, std::uint64_t bits, std::span<std::uint32_t> codes,
                std::vector<std::uint32_t>& header_words, PngBlockPlan& plan);

}  // namespace streampipe::io::detail
