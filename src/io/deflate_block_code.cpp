// SPDX-License-Identifier: Apache-2.0
// Code lengths, canonical codes and the dynamic-Huffman block header (see
// deflate_block_code.hpp).

#include "deflate_block_code.hpp"

#include <algorithm>
#include <utility>

namespace streampipe::io::detail {

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

BlockCode block_code(const SymbolCounts& freq, bool last) {
  BlockCode b;
  fit_lengths(freq, 15, b.lengths);
  canonical_codes(b.lengths, b.codes);
  const auto put = [&b](std::uint32_t bits, int count) {
    b.header.push_back({static_cast<std::uint16_t>(bits), static_cast<std::uint8_t>(count)});
    b.header_bits += static_cast<std::uint64_t>(count);
  };
  const std::span<const std::uint8_t> lit_lengths = b.lengths;
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
  std::array<std::uint32_t, 19> cl_freq{};
  for (const auto& [symbol, extra] : seq) ++cl_freq[symbol];
  std::array<std::uint8_t, 19> cl_lengths{};
  std::array<std::uint16_t, 19> cl_codes{};
  fit_lengths(cl_freq, 7, cl_lengths);
  canonical_codes(cl_lengths, cl_codes);
  static constexpr std::array<std::uint8_t, 19> order{16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15};
  int nclen = 19;
  while (nclen > 4 && cl_lengths[order[static_cast<std::size_t>(nclen - 1)]] == 0) --nclen;
  b.header.reserve(4 + static_cast<std::size_t>(nclen) + 2 * seq.size());
  put(last ? 1u : 0u, 1);
  put(2, 2);  // dynamic Huffman
  put(static_cast<std::uint32_t>(nlit - 257), 5);
  put(static_cast<std::uint32_t>(ndist - 1), 5);
  put(static_cast<std::uint32_t>(nclen - 4), 4);
  for (int i = 0; i < nclen; ++i) put(cl_lengths[order[static_cast<std::size_t>(i)]], 3);
  for (const auto& [symbol, extra] : seq) {
    put(cl_codes[symbol], cl_lengths[symbol]);
    if (symbol == 17) put(extra, 3);
    if (symbol == 18) put(extra, 7);
  }
  return b;
}

std::uint64_t block_bits(const BlockCode& code, const SymbolCounts& freq) {
  // The extra bits of each length symbol, read off the lengths that use it.
  static constexpr auto extra_of_symbol = [] {
    std::array<std::uint8_t, kLiteralLengthCodes> extra{};
    for (std::size_t length = kMinRun; length <= kMaxRun; ++length)
      extra[kLengthCodes[length].symbol] = kLengthCodes[length].extra_bits;
    return extra;
  }();
  std::uint64_t bits = code.header_bits;
  for (std::size_t s = 0; s < freq.size(); ++s) {
    const std::uint64_t each = std::uint64_t{code.lengths[s]} + extra_of_symbol[s] + (s > kEndOfBlock ? 1 : 0);
    bits += std::uint64_t{freq[s]} * each;
  }
  return bits;
}

}  // namespace streampipe::io::detail
