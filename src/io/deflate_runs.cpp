// SPDX-License-Identifier: Apache-2.0
// deflate (RFC 1951) for PNG's filtered rows: per block of input, a histogram of the
// literals and of the lengths of runs (a byte repeated: a match at distance 1), Huffman code
// lengths fitted to it (at most 15 bits; 7 for the code-length code), a dynamic-Huffman
// block. Two distance codes of one bit each are declared so that every block's distance
// code is complete; only code 0 (distance 1) is used.

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

constexpr std::size_t kBlockBytes = std::size_t{256} << 10;  // input per block
constexpr int kLiteralLengthCodes = 286;
constexpr int kEndOfBlock = 256;

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
    table[length] = {static_cast<std::uint16_t>(257 + code), extra[c],
                     static_cast<std::uint16_t>(length - base[c])};
  }
  return table;
}
constexpr auto kLengthCodes = make_length_codes();

// Huffman code lengths for `freq` (n symbols), none longer than `limit`. At least two
// symbols get a code, so that every code is complete (decoders refuse most incomplete ones).
void fit_lengths(std::span<const std::uint32_t> freq, int limit, std::span<std::uint8_t> lengths) {
  const std::size_t n = freq.size();
  std::vector<std::uint32_t> f(freq.begin(), freq.end());
  std::size_t used = static_cast<std::size_t>(std::count_if(f.begin(), f.end(), [](auto v) { return v > 0; }));
  for (std::size_t s = 0; used < 2 && s < n; ++s)
    if (f[s] == 0) f[s] = 1, ++used;
  for (;;) {
    // Huffman's construction on (weight, node) pairs; parents[] then gives each depth.
    std::vector<std::pair<std::uint64_t, int>> leaves;
    for (std::size_t s = 0; s < n; ++s)
      if (f[s] > 0) leaves.emplace_back(f[s], static_cast<int>(s));
    std::sort(leaves.begin(), leaves.end());
    const std::size_t m = leaves.size();
    std::vector<int> parent(2 * m, -1);
    std::vector<std::uint64_t> weight(2 * m);
    for (std::size_t i = 0; i < m; ++i) weight[i] = leaves[i].first;
    // Two queues: leaves in weight order, internal nodes in creation (= weight) order.
    std::size_t next_leaf = 0, next_inner = m, made = m;
    auto take = [&]() {
      if (next_leaf < m && (next_inner >= made || weight[next_leaf] <= weight[next_inner])) return next_leaf++;
      return next_inner++;
    };
    while (made < 2 * m - 1) {
      const std::size_t a = take(), b = take();
      weight[made] = weight[a] + weight[b];
      parent[a] = parent[b] = static_cast<int>(made);
      ++made;
    }
    std::vector<int> depth(2 * m - 1, 0);
    int longest = 0;
    for (std::size_t i = 2 * m - 1; i-- > 0;) {
      if (parent[i] >= 0) depth[i] = depth[static_cast<std::size_t>(parent[i])] + 1;
      if (i < m) longest = std::max(longest, depth[i]);
    }
    if (longest <= limit) {
      std::fill(lengths.begin(), lengths.end(), std::uint8_t{0});
      for (std::size_t i = 0; i < m; ++i)
        lengths[static_cast<std::size_t>(leaves[i].second)] = static_cast<std::uint8_t>(depth[i]);
      return;
    }
    for (auto& v : f)  // flatten the histogram until the tree fits (rare: skewed blocks)
      if (v > 0) v = (v >> 1) | 1;
  }
}

// Canonical codes (RFC 1951 3.2.2), bit-reversed for the LSB-first bit stream.
void canonical_codes(std::span<const std::uint8_t> lengths, std::span<std::uint16_t> codes) {
  std::array<std::uint16_t, 16> count{}, next{};
  for (auto l : lengths) ++count[l];
  count[0] = 0;
  std::uint16_t code = 0;
  for (std::size_t bits = 1; bits < 16; ++bits) {
    code = static_cast<std::uint16_t>((code + count[bits - 1]) << 1);
    next[bits] = code;
  }
  for (std::size_t s = 0; s < lengths.size(); ++s) {
    const int l = lengths[s];
    if (l == 0) continue;
    const std::uint16_t c = next[static_cast<std::size_t>(l)]++;
    std::uint16_t reversed = 0;
    for (int b = 0; b < l; ++b) reversed = static_cast<std::uint16_t>(reversed | (((c >> b) & 1u) << (l - 1 - b)));
    codes[s] = reversed;
  }
}

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

void write_block_header(BitWriter& w, bool last, std::span<const std::uint8_t> lit_lengths) {
  int nlit = kLiteralLengthCodes;
  while (nlit > 257 && lit_lengths[static_cast<std::size_t>(nlit - 1)] == 0) --nlit;
  constexpr int ndist = 2;
  std::vector<std::uint8_t> all(lit_lengths.begin(), lit_lengths.begin() + nlit);
  all.push_back(1);
  all.push_back(1);
  // The code lengths, zero runs as 17 (3-10) and 18 (11-138): (symbol, extra value).
  std::vector<std::pair<std::uint8_t, std::uint8_t>> seq;
  for (std::size_t i = 0; i < all.size();) {
    std::size_t zeros = 0;
    while (i + zeros < all.size() && all[i + zeros] == 0 && zeros < 138) ++zeros;
    if (zeros >= 11) {
      seq.emplace_back(18, static_cast<std::uint8_t>(zeros - 11));
      i += zeros;
    } else if (zeros >= 3) {
      seq.emplace_back(17, static_cast<std::uint8_t>(zeros - 3));
      i += zeros;
    } else {
      seq.emplace_back(all[i], 0);
      ++i;
    }
  }
  std::array<std::uint32_t, 19> freq{};
  for (const auto& [symbol, extra] : seq) ++freq[symbol];
  std::array<std::uint8_t, 19> cl_lengths{};
  std::array<std::uint16_t, 19> cl_codes{};
  fit_lengths(freq, 7, cl_lengths);
  canonical_codes(cl_lengths, cl_codes);
  static constexpr std::array<std::uint8_t, 19> order{16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15};
  int nclen = 19;
  while (nclen > 4 && cl_lengths[order[static_cast<std::size_t>(nclen - 1)]] == 0) --nclen;
  w.put(last ? 1u : 0u, 1);
  w.put(2, 2);  // dynamic Huffman
  w.put(static_cast<std::uint32_t>(nlit - 257), 5);
  w.put(static_cast<std::uint32_t>(ndist - 1), 5);
  w.put(static_cast<std::uint32_t>(nclen - 4), 4);
  for (int i = 0; i < nclen; ++i) w.put(cl_lengths[order[static_cast<std::size_t>(i)]], 3);
  for (const auto& [symbol, extra] : seq) {
    w.put(cl_codes[symbol], cl_lengths[symbol]);
    if (symbol == 17) w.put(extra, 3);
    if (symbol == 18) w.put(extra, 7);
  }
}

}  // namespace

std::vector<std::uint8_t> deflate_runs(std::span<const std::uint8_t> data) {
  // Worst case per block: 15-bit codes for every byte, plus its header; the checksum, and the
  // 8 bytes the bit writer stores past its last byte. Left uninitialized: zeroing twice the
  // image's size cost as much as the checksum.
  const std::size_t worst = 2 + data.size() * 2 + (data.size() / kBlockBytes + 1) * 400 + 4 + 8;
  const auto out = std::make_unique_for_overwrite<std::uint8_t[]>(worst);
  out[0] = 0x78;  // deflate, 32 KiB window
  out[1] = 0x01;  // no dictionary, fastest; (0x78 * 256 + 0x01) % 31 == 0
  BitWriter w(out.get() + 2);
  std::vector<Run> runs;
  runs.reserve(std::min(data.size(), kBlockBytes) / kMinRun + 1);
  const std::uint8_t* d = data.data();
  std::size_t at = 0;
  do {
    const std::size_t end = std::min(data.size(), at + kBlockBytes);
    std::array<std::uint32_t, kLiteralLengthCodes> freq{};
    runs.clear();
    scan_runs(data, at, end, runs, std::span<std::uint32_t, 256>(freq.data(), 256));
    for (const Run& r : runs) ++freq[kLengthCodes[r.length].symbol];
    freq[kEndOfBlock] = 1;
    std::array<std::uint8_t, kLiteralLengthCodes> lengths{};
    std::array<std::uint16_t, kLiteralLengthCodes> codes{};
    fit_lengths(freq, 15, lengths);
    canonical_codes(lengths, codes);
    write_block_header(w, end == data.size(), lengths);
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
  std::uint8_t* end = w.finish();
  const auto adler = static_cast<std::uint32_t>(adler32_z(1, data.data(), data.size()));
  for (int shift = 24; shift >= 0; shift -= 8) *end++ = static_cast<std::uint8_t>(adler >> shift);
  return {out.get(), end};
}

}  // namespace streampipe::io::detail
