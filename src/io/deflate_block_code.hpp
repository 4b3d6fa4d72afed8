// SPDX-License-Identifier: Apache-2.0
#pragma once
// The Huffman side of deflate_runs' blocks, shared by the host encoder and the GPU's
// (gpu_png_encoder.hpp), which must write the same bits: code lengths fitted to a block's
// histogram (at most 15 bits; 7 for the code-length code), canonical codes, the block
// header's fields, and how many bits the whole block takes - which the GPU needs before it
// writes anything, to place every block of an image at once.

#include "deflate_run_scan.hpp"

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace streampipe::io::detail {

inline constexpr std::size_t kDeflateBlockBytes = std::size_t{256} << 10;  // input per block
inline constexpr int kLiteralLengthCodes = 286;
inline constexpr int kEndOfBlock = 256;

// Length 3-258 -> its code (257-285), extra bits and their value.
struct LengthCode {
  std::uint16_t symbol;
  std::uint8_t extra_bits;
  std::uint16_t extra_value;
};

constexpr std::array<LengthCode, kMaxRun + 1> make_length_codes() {
  constexpr std::array<std::uint16_t, 29> base{3,  4,  5,  6,  7,  8,  9,  10, 11,  13,  15,  17,  19,  23, 27,
                                               31, 35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195, 227, 258};
  constexpr std::array<std::uint8_t, 29> extra{0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2,
                                               2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0};
  std::array<LengthCode, kMaxRun + 1> table{};
  for (std::size_t length = kMinRun; length <= kMaxRun; ++length) {
    int code = 28;
    while (base[static_cast<std::size_t>(code)] > length) --code;
    const auto c = static_cast<std::size_t>(code);
    table[length] = {static_cast<std::uint16_t>(257 + code), extra[c], static_cast<std::uint16_t>(length - base[c])};
  }
  return table;
}
inline constexpr auto kLengthCodes = make_length_codes();

// Huffman code lengths for `freq` (n symbols), none longer than `limit`. At least two
// symbols get a code, so that every code is complete (decoders refuse most incomplete ones).
void fit_lengths(std::span<const std::uint32_t> freq, int limit, std::span<std::uint8_t> lengths);

// Canonical codes (RFC 1951 3.2.2), bit-reversed for the LSB-first bit stream.
void canonical_codes(std::span<const std::uint8_t> lengths, std::span<std::uint16_t> codes);

// Bits written as one piece, least significant first.
struct BitField {
  std::uint16_t bits;
  std::uint8_t count;
};

using SymbolCounts = std::array<std::uint32_t, kLiteralLengthCodes>;

// A block's codes and header: BFINAL, dynamic Huffman, the code counts, the code-length
// code and the code lengths (zero runs as 17 and 18). Two distance codes of one bit are
// declared so that the distance code is complete; only code 0 (distance 1) is used.
struct BlockCode {
  std::array<std::uint8_t, kLiteralLengthCodes> lengths{};
  std::array<std::uint16_t, kLiteralLengthCodes> codes{};
  std::vector<BitField> header;
  std::uint64_t header_bits = 0;
};

// `freq`: the block's literal and length symbols, the end of block's 1 included.
[[nodiscard]] BlockCode block_code(const SymbolCounts& freq, bool last);

// The whole block's bits for `freq` (as given to block_code): header, every symbol with
// its extra bits and, for a length, the distance code's bit, and the end of block.
[[nodiscard]] std::uint64_t block_bits(const BlockCode& code, const SymbolCounts& freq);

}  // namespace streampipe::io::detail
