// SPDX-License-Identifier: Apache-2.0
// The host half of the GPU PNG encoder, on the CPU: the order-free parse (parsed_at) gives
// exactly scan_runs' runs; code lengths are complete and within their limit; and blocks
// planned from their statistics, packed as the device gets them and written bit by bit at
// the planned places (what the kernels do) give deflate_runs' stream byte for byte, and
// png_file() makes of it the host encoder's file.

#include "deflate_block_code.hpp"
#include "deflate_run_parse.hpp"
#include "deflate_run_scan.hpp"
#include "gpu_png_plan.hpp"
#include "png_fast_encoder.hpp"

#include "streampipe/io/gpu_png_encoder.hpp"
#include "streampipe/io/image.hpp"

#include <gtest/gtest.h>
#include <zlib.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <random>
#include <string>
#include <vector>

namespace streampipe::io::detail {
namespace {

using Bytes = std::vector<std::uint8_t>;

struct Sample {
  std::string name;
  Bytes data;
};

// Data that stresses the parse: runs of every length, across blocks, flat data, noise, grain.
std::vector<Sample> samples() {
  std::vector<Sample> s;
  std::mt19937 rng(17);
  s.push_back({"one byte", {7}});
  s.push_back({"two equal", {7, 7}});
  s.push_back({"four equal", {7, 7, 7, 7}});
  s.push_back({"zeros over three blocks", Bytes(3 * kDeflateBlockBytes + 1234, 0)});
  Bytes exact(2 * kDeflateBlockBytes, 255);
  s.push_back({"two full blocks of 255", exact});
  Bytes noise(kDeflateBlockBytes + 777);
  for (auto& b : noise) b = static_cast<std::uint8_t>(rng());
  s.push_back({"noise", noise});
  Bytes runs;
  std::uint8_t value = 1;
  for (std::size_t run = 1; runs.size() < 2 * kDeflateBlockBytes + 5000; run = run % 800 + 1, ++value)
    runs.insert(runs.end(), run, value);
  s.push_back({"runs of 1-800", runs});
  // A run that starts just before a block boundary and continues past it, for each offset.
  for (std::size_t before : {1u, 2u, 3u, 4u, 258u, 259u, 300u}) {
    Bytes edge(kDeflateBlockBytes + 600);
    for (auto& b : edge) b = static_cast<std::uint8_t>(rng() % 3 + 10);
    std::fill(edge.begin() + static_cast<std::ptrdiff_t>(kDeflateBlockBytes - before),
              edge.begin() + static_cast<std::ptrdiff_t>(kDeflateBlockBytes + 1 + rng() % 500), 42);
    s.push_back({"run crossing a block " + std::to_string(before) + " before its end", edge});
  }
  Bytes grain(3 * 1000 * 300);
  for (std::size_t i = 0; i < grain.size(); ++i)
    grain[i] = i % 1001 == 0 ? 2 : static_cast<std::uint8_t>(rng() % 5 == 0 ? rng() % 7 : 0);
  s.push_back({"filtered grain", grain});
  return s;
}

// The parse as the GPU computes it: each segment on its own.
std::vector<std::int32_t> parse_by_segments(const Bytes& d) {
  std::vector<std::int32_t> out(d.size());
  for (std::size_t block = 0; block < d.size(); block += kDeflateBlockBytes) {
    const std::size_t end = std::min(d.size(), block + kDeflateBlockBytes);
    for (std::size_t g = block, t; g < end; g = t) {
      for (t = g + 1; t < end && d[t] == d[g];) ++t;
      const bool fresh = g == 0 || d[g - 1] != d[g];
      for (std::size_t p = g; p < t; ++p)
        out[p] = parsed_at(static_cast<std::uint32_t>(p), static_cast<std::uint32_t>(g), static_cast<std::uint32_t>(t),
                           fresh);
    }
  }
  return out;
}

// The parse as the host encoder makes it.
std::vector<std::int32_t> parse_by_scan(const Bytes& d) {
  std::vector<std::int32_t> out(d.size(), kParsedLiteral);
  std::vector<Run> runs;
  for (std::size_t block = 0; block < d.size(); block += kDeflateBlockBytes) {
    std::array<std::uint32_t, 256> literals{};
    runs.clear();
    scan_runs(d, block, std::min(d.size(), block + kDeflateBlockBytes), runs, literals);
    for (const Run& r : runs) {
      out[r.at] = static_cast<std::int32_t>(r.length);
      std::fill_n(out.begin() + r.at + 1, r.length - 1, kParsedInside);
    }
  }
  return out;
}

TEST(GpuPngPlan, SegmentParseIsTheScansParse) {
  for (const Sample& s : samples()) EXPECT_TRUE(parse_by_segments(s.data) == parse_by_scan(s.data)) << s.name;
}

// Each block's statistics as the counting kernel gathers them.
std::vector<PngBlockStats> stats_of(const Bytes& d, const std::vector<std::int32_t>& parse) {
  std::vector<PngBlockStats> stats((d.size() + kDeflateBlockBytes - 1) / kDeflateBlockBytes, PngBlockStats{});
  for (std::size_t p = 0; p < d.size(); ++p) {
    PngBlockStats& s = stats[p / kDeflateBlockBytes];
    const std::size_t end = std::min(d.size(), (p / kDeflateBlockBytes + 1) * kDeflateBlockBytes);
    if (parse[p] == kParsedLiteral) ++s.histogram[d[p]];
    if (parse[p] > 0) ++s.histogram[256 + static_cast<std::size_t>(parse[p]) - kMinRun];
    s.sum += d[p];
    s.weighted += static_cast<unsigned long long>(end - p) * d[p];
  }
  return stats;
}

void or_bits(Bytes& out, std::uint64_t bit, std::uint32_t value) {
  for (std::uint64_t v = std::uint64_t{value} << (bit % 8), at = bit / 8; v != 0; v >>= 8, ++at)
    out.at(at) |= static_cast<std::uint8_t>(v);
}

// The zlib stream the GPU's kernels write for `d`, written here on the CPU from the same tables.
Bytes write_as_planned(const Bytes& d) {
  const std::vector<std::int32_t> parse = parse_by_segments(d);
  const std::vector<PngBlockStats> stats = stats_of(d, parse);
  const PngImagePlan plan = plan_png_image(stats, static_cast<std::uint32_t>(d.size()));
  Bytes out(plan.zlib_bytes() + 8, 0);
  std::uint64_t bit = 16;
  for (std::size_t k = 0; k < plan.blocks.size(); ++k) {
    std::vector<std::uint32_t> codes(kPngBins), words;
    PngBlockPlan placed{};
    pack_block(plan.blocks[k], bit, plan.block_bits[k], codes, words, placed);
    EXPECT_LE(words.size(), kMaxHeaderWords);
    EXPECT_EQ(words.size(), (placed.header_bits + 31) / 32);
    for (std::size_t w = 0; w < words.size(); ++w) or_bits(out, bit + 32 * w, words[w]);
    std::uint64_t at = bit + placed.header_bits;
    const std::size_t end = std::min(d.size(), (k + 1) * kDeflateBlockBytes);
    for (std::size_t p = k * kDeflateBlockBytes; p < end; ++p) {
      if (parse[p] == kParsedInside) continue;
      const std::uint32_t e = parse[p] == kParsedLiteral ? codes[d[p]] : codes[256 + static_cast<std::size_t>(parse[p]) - kMinRun];
      EXPECT_NE(e >> 24, 0u) << "position " << p << " has no code";
      or_bits(out, at, e & 0xffffffu);
      at += e >> 24;
    }
    or_bits(out, at, placed.end_of_block & 0xffffffu);
    EXPECT_EQ(at + (placed.end_of_block >> 24), placed.end_bit) << "block " << k;
    bit += plan.block_bits[k];
  }
  EXPECT_EQ(bit, 16 + plan.deflate_bits);
  out.resize(plan.zlib_bytes());
  finish_zlib(out, plan.adler);
  return out;
}

TEST(GpuPngPlan, BlocksWrittenAtTheirPlannedBitsAreDeflateRunsStream) {
  for (const Sample& s : samples()) EXPECT_TRUE(write_as_planned(s.data) == deflate_runs(s.data)) << s.name;
}

TEST(GpuPngPlan, BlockAdlersCombineToTheWholeData) {
  for (const Sample& s : samples()) {
    const PngImagePlan plan = plan_png_image(stats_of(s.data, parse_by_scan(s.data)), static_cast<std::uint32_t>(s.data.size()));
    EXPECT_EQ(plan.adler, adler32_z(1, s.data.data(), s.data.size())) << s.name;
  }
}

TEST(GpuPngPlan, StatisticsMustMatchTheBlocks) {
  const std::vector<PngBlockStats> two(2, PngBlockStats{});
  EXPECT_THROW((void)plan_png_image(two, 100), std::invalid_argument);
  EXPECT_THROW((void)plan_png_image(two, static_cast<std::uint32_t>(2 * kDeflateBlockBytes + 1)), std::invalid_argument);
  EXPECT_NO_THROW((void)plan_png_image(two, static_cast<std::uint32_t>(2 * kDeflateBlockBytes)));
  EXPECT_THROW((void)plan_png_image({}, 0), std::invalid_argument);
}

// Code lengths: at most `limit`, at least two symbols coded, and a complete code (Kraft sum 1).
void expect_complete(const std::vector<std::uint32_t>& freq, int limit) {
  std::vector<std::uint8_t> lengths(freq.size());
  fit_lengths(freq, limit, lengths);
  double kraft = 0;
  int coded = 0;
  for (std::size_t s = 0; s < freq.size(); ++s) {
    EXPECT_LE(lengths[s], limit);
    if (freq[s] > 0) {
      EXPECT_GT(lengths[s], 0) << "symbol " << s << " is used";
    }
    if (lengths[s] > 0) kraft += std::ldexp(1.0, -lengths[s]), ++coded;
  }
  EXPECT_GE(coded, 2);
  EXPECT_DOUBLE_EQ(kraft, 1.0);
}

TEST(GpuPngPlan, FittedLengthsAreCompleteAndLimited) {
  std::vector<std::uint32_t> fib(40);
  fib[0] = fib[1] = 1;
  for (std::size_t i = 2; i < fib.size(); ++i) fib[i] = fib[i - 1] + fib[i - 2];  // a tree 39 deep, unlimited
  expect_complete(fib, 15);
  expect_complete(fib, 7);
  expect_complete(std::vector<std::uint32_t>(286, 0), 15);  // nothing used: two symbols coded anyway
  std::vector<std::uint32_t> one(19, 0);
  one[5] = 1000;
  expect_complete(one, 7);
  std::vector<std::uint32_t> flat(286, 3);
  expect_complete(flat, 15);
}

TEST(GpuPngPlan, BlockBitsCountEverySymbol) {
  // One literal of each of two values and the end of block: nothing else costs.
  SymbolCounts freq{};
  freq['a'] = 5;
  freq['b'] = 3;
  freq[kLengthCodes[258].symbol] = 2;  // no extra bits, the distance bit
  freq[kLengthCodes[200].symbol] = 1;  // 5 extra bits
  freq[kEndOfBlock] = 1;
  const BlockCode code = block_code(freq, true);
  std::uint64_t header = 0;
  for (const BitField& f : code.header) header += f.count;
  EXPECT_EQ(code.header_bits, header);
  EXPECT_EQ(code.header.front().bits, 1u);  // BFINAL
  const std::uint64_t expected = header + 5u * code.lengths['a'] + 3u * code.lengths['b'] +
                                 2u * (code.lengths[kLengthCodes[258].symbol] + 1u) +
                                 (code.lengths[kLengthCodes[200].symbol] + 5u + 1u) + code.lengths[kEndOfBlock];
  EXPECT_EQ(block_bits(code, freq), expected);
}

// What the GPU encoder's streams become: the host encoder's file, from the same zlib stream.
TEST(GpuPngPlan, PngFileWrapsAStreamAsTheHostEncoderDoes) {
  std::mt19937 rng(29);
  for (const auto& [w, h] : {std::pair{1u, 1u}, std::pair{333u, 77u}, std::pair{1500u, 900u}}) {
    Image img = Image::make(w, h, 1, 8);
    for (std::size_t i = 0; i < img.pixels.size(); ++i)
      img.pixels[i] = static_cast<std::uint8_t>(i % w / 7 + rng() % 5);
    Bytes filtered;
    for (std::size_t y = 0; y < h; ++y) {
      filtered.push_back(2);  // up
      for (std::size_t x = 0; x < w; ++x)
        filtered.push_back(static_cast<std::uint8_t>(img.pixels[y * w + x] - (y > 0 ? img.pixels[(y - 1) * w + x] : 0)));
    }
    const PngStream stream{w, h, deflate_runs(filtered)};
    EXPECT_TRUE(png_file(stream) == encode_png(img, {.compression = 1})) << w << "x" << h;
  }
  EXPECT_THROW((void)png_file({}), std::invalid_argument);
  EXPECT_THROW((void)png_file({0, 5, Bytes(10)}), std::invalid_argument);
}

}  // namespace
}  // namespace streampipe::io::detail
