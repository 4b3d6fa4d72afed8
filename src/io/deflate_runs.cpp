// SPDX-License-Identifier: Apache-2.0
// deflate (RFC 1951) for PNG's filtered rows: per block of input, a histogram of the
// literals and of the lengths of runs (a byte repeated: a match at distance 1), Huffman code
// lengths fitted to it (at most 15 bits; 7 for the code-length code), a dynamic-Huffman
// block. Two distance codes of one bit each are declared so that every block's distance
// code is complete; only code 0 (distance 1) is used.

#include "deflate_block_code.hpp"
#include "deflate_run_scan.hpp"
#include "png_fast_encoder.hpp"

#include <zlib.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cstring>
#include <memory>
#include <stdexcept>

namespace streampipe::io::detail {
namespace {

// LSB-first bits into a buffer the caller made large enough, with 8 bytes to spare past the
// last one written: every flush stores 8 bytes and keeps the whole ones, so that no branch
// depends on how full the accumulator is (on photographs that branch was mispredicted often).
class BitWriter {
 public:
  explicit BitWriter(std::uint8_t* at) : at_(at) {}
  // Appends without storing: after a flush at most 7 bits wait, so up to 57 more fit.
  void add(std::uint32_t bits, int count) {
    acc_ |= std::uint64_t{bits} << filled_;
    filled_ += count;
  }
  void flush() {
    if constexpr (std::endian::native == std::endian::little) {
      std::memcpy(at_, &acc_, 8);
    } else {
      for (int i = 0; i < 8; ++i) at_[i] = static_cast<std::uint8_t>(acc_ >> (8 * i));
    }
    const int whole = filled_ >> 3;  // < 8: never the whole accumulator
    at_ += whole;
    acc_ >>= 8 * whole;
    filled_ &= 7;
  }
  void put(std::uint32_t bits, int count) {  // count <= 32
    add(bits, count);
    flush();
  }
  // Whole bytes out, the last one padded with zero bits; returns the end.
  std::uint8_t* finish() {
    if (filled_ > 0) *at_++ = static_cast<std::uint8_t>(acc_);
    acc_ = 0;
    filled_ = 0;
    return at_;
  }

 private:
  std::uint8_t* at_;
  std::uint64_t acc_ = 0;
  int filled_ = 0;
};

// A literal's code in the low 16 bits and its length above, one load per byte.
using LiteralCodes = std::array<std::uint32_t, 256>;

// Literals three to a flush: three codes of at most 15 bits fit behind the 7 bits a flush leaves.
void put_literals(BitWriter& w, const LiteralCodes& lit, const std::uint8_t* p, std::size_t n) {
  for (; n >= 3; n -= 3, p += 3) {
    const std::uint32_t a = lit[p[0]], b = lit[p[1]], c = lit[p[2]];
    w.add(a & 0xffffu, static_cast<int>(a >> 16));
    w.add(b & 0xffffu, static_cast<int>(b >> 16));
    w.add(c & 0xffffu, static_cast<int>(c >> 16));
    w.flush();
  }
  for (; n > 0; --n, ++p) w.put(lit[*p] & 0xffffu, static_cast<int>(lit[*p] >> 16));
}

}  // namespace

std::vector<std::uint8_t> deflate_runs(std::span<const std::uint8_t> data) {
  // Worst case per block: 15-bit codes for every byte, plus its header; the checksum, and the
  // 8 bytes the bit writer stores past its last byte. Left uninitialized: zeroing twice the
  // image's size cost as much as the checksum.
  const std::size_t worst = 2 + data.size() * 2 + (data.size() / kDeflateBlockBytes + 1) * 400 + 4 + 8;
  const auto out = std::make_unique_for_overwrite<std::uint8_t[]>(worst);
  BitWriter w(out.get() + 2);
  std::vector<Run> runs;
  runs.reserve(std::min(data.size(), kDeflateBlockBytes) / kMinRun + 1);
  const std::uint8_t* d = data.data();
  std::size_t at = 0;
  do {
    const std::size_t end = std::min(data.size(), at + kDeflateBlockBytes);
    std::array<std::uint32_t, kLiteralLengthCodes> freq{};
    runs.clear();
    scan_runs(data, at, end, runs, std::span<std::uint32_t, 256>(freq.data(), 256));
    for (const Run& r : runs) ++freq[kLengthCodes[r.length].symbol];
    freq[kEndOfBlock] = 1;
    const BlockCode code = block_code(freq, end == data.size());
    for (const BitField& f : code.header) w.put(f.bits, f.count);
    const auto& lengths = code.lengths;
    const auto& codes = code.codes;
    LiteralCodes lit;
    for (std::size_t b = 0; b < 256; ++b) lit[b] = codes[b] | (std::uint32_t{lengths[b]} << 16);
    std::size_t next = at;  // the first byte not yet coded
    for (const Run& r : runs) {
      put_literals(w, lit, d + next, r.at - next);
      const LengthCode& lc = kLengthCodes[r.length];
      // The length's code and extra bits, then distance code 0 (distance 1): one 0 bit.
      w.put(codes[lc.symbol] | (std::uint32_t{lc.extra_value} << lengths[lc.symbol]),
            lengths[lc.symbol] + lc.extra_bits + 1);
      next = r.at + r.length;
    }
    put_literals(w, lit, d + next, end - next);
    w.put(codes[kEndOfBlock], lengths[kEndOfBlock]);
    at = end;
  } while (at < data.size());
  const std::size_t bytes = static_cast<std::size_t>(w.finish() - out.get()) + 4;
  finish_zlib({out.get(), bytes}, static_cast<std::uint32_t>(adler32_z(1, data.data(), data.size())));
  return {out.get(), out.get() + bytes};
}

void finish_zlib(std::span<std::uint8_t> zlib, std::uint32_t adler) {
  if (zlib.size() < 6) throw std::invalid_argument("a zlib stream has at least 6 bytes");
  zlib[0] = 0x78;  // deflate, 32 KiB window
  zlib[1] = 0x01;  // no dictionary, fastest; (0x78 * 256 + 0x01) % 31 == 0
  std::uint8_t* end = zlib.data() + zlib.size() - 4;
  for (int shift = 24; shift >= 0; shift -= 8) *end++ = static_cast<std::uint8_t>(adler >> shift);
}

}  // namespace streampipe::io::detail
