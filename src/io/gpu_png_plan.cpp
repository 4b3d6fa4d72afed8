// SPDX-License-Identifier: Apache-2.0
// From block statistics to codes, placement and device tables (see gpu_png_plan.hpp).

#include "gpu_png_plan.hpp"

#include <fmt/format.h>
#include <zlib.h>

#include <algorithm>
#include <stdexcept>

namespace streampipe::io::detail {
namespace {

constexpr std::uint32_t kAdlerBase = 65521;

}  // namespace

SymbolCounts symbol_counts(const PngBlockStats& stats) {
  SymbolCounts freq{};
  for (std::size_t b = 0; b < 256; ++b) freq[b] = stats.histogram[b];
  for (std::size_t length = kMinRun; length <= kMaxRun; ++length)
    freq[kLengthCodes[length].symbol] += stats.histogram[256 + length - kMinRun];
  freq[kEndOfBlock] = 1;
  return freq;
}

std::uint32_t block_adler(const PngBlockStats& stats, std::uint32_t length) {
  const auto a = static_cast<std::uint32_t>((1 + stats.sum) % kAdlerBase);
  const auto b = static_cast<std::uint32_t>((length + stats.weighted) % kAdlerBase);
  return a | b << 16;
}

PngImagePlan plan_png_image(std::span<const PngBlockStats> stats, std::uint32_t length) {
  const std::size_t blocks = (std::size_t{length} + kDeflateBlockBytes - 1) / kDeflateBlockBytes;
  if (length == 0 || stats.size() != blocks)
    throw std::invalid_argument(
        fmt::format("a PNG of {} filtered bytes has {} deflate blocks, not {}", length, blocks, stats.size()));
  PngImagePlan plan;
  plan.blocks.reserve(blocks);
  plan.block_bits.reserve(blocks);
  uLong adler = adler32_z(0, nullptr, 0);
  for (std::size_t k = 0; k < blocks; ++k) {
    const SymbolCounts freq = symbol_counts(stats[k]);
    plan.blocks.push_back(block_code(freq, k + 1 == blocks));
    plan.block_bits.push_back(block_bits(plan.blocks.back(), freq));
    plan.deflate_bits += plan.block_bits.back();
    const auto n = static_cast<std::uint32_t>(std::min<std::size_t>(kDeflateBlockBytes, length - k * kDeflateBlockBytes));
    adler = adler32_combine(adler, block_adler(stats[k], n), static_cast<z_off_t>(n));
  }
  plan.adler = static_cast<std::uint32_t>(adler);
  return plan;
}

void pack_block(const BlockCode& block, std::uint64_t first_bit, std::uint64_t bits, std::span<std::uint32_t> codes,
                std::vector<std::uint32_t>& header_words, PngBlockPlan& plan) {
  if (codes.size() != kPngBins) throw std::invalid_argument("pack_block: a block has 512 code entries");
  for (std::size_t b = 0; b < 256; ++b) codes[b] = code_entry(block.codes[b], block.lengths[b]);
  for (std::size_t length = kMinRun; length <= kMaxRun; ++length) {
    const LengthCode& lc = kLengthCodes[length];
    const std::uint32_t l = block.lengths[lc.symbol];
    // A length the block does not use may have no code; it is never written.
    codes[256 + length - kMinRun] =
        l == 0 ? 0 : code_entry(block.codes[lc.symbol] | std::uint32_t{lc.extra_value} << l, l + lc.extra_bits + 1);
  }
  plan.first_bit = first_bit;
  plan.end_bit = first_bit + bits;
  plan.header_bits = static_cast<std::uint32_t>(block.header_bits);
  plan.header_word = static_cast<std::uint32_t>(header_words.size());
  plan.end_of_block = code_entry(block.codes[kEndOfBlock], block.lengths[kEndOfBlock]);
  plan.unused = 0;
  std::uint64_t acc = 0;
  int filled = 0;
  for (const BitField& f : block.header) {
    acc |= std::uint64_t{f.bits} << filled;
    filled += f.count;
    if (filled >= 32) {
      header_words.push_back(static_cast<std::uint32_t>(acc));
      acc >>= 32;
      filled -= 32;
    }
  }
  if (filled > 0) header_words.push_back(static_cast<std::uint32_t>(acc));
}

}  // namespace streampipe::io::detail
