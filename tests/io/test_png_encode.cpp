// SPDX-License-Identifier: Apache-2.0
// PNG encoding choices (filter, strategy, level): every combination decodes to the exact
// input pixels, the filter asked for is the one in the file (checked by inflating the IDAT
// stream and reading each row's filter byte), the strategy reaches its compressor, and the
// automatic choices follow the documented table. test_png_fast.cpp tests the fast encoder's
// deflate streams on their own.

#include "streampipe/io/image.hpp"

#include <gtest/gtest.h>
#include <zlib.h>

#include <array>
#include <cstring>
#include <random>
#include <set>
#include <stdexcept>
#include <vector>

namespace streampipe::io {
namespace {

constexpr std::array kFilters{PngFilter::automatic, PngFilter::none,  PngFilter::sub, PngFilter::up,
                              PngFilter::average,   PngFilter::paeth, PngFilter::all};
constexpr std::array kStrategies{PngStrategy::automatic, PngStrategy::deflate, PngStrategy::filtered,
                                 PngStrategy::rle, PngStrategy::huffman, PngStrategy::fast};

Image random_image(std::uint32_t w, std::uint32_t h, int channels, int depth, unsigned seed) {
  Image img = Image::make(w, h, channels, depth);
  std::mt19937 rng(seed);
  for (auto& b : img.pixels) b = static_cast<std::uint8_t>(rng());
  return img;
}

// Gradients with grain: content on which every filter leaves different residuals.
Image photo_like(std::uint32_t w, std::uint32_t h, int channels, int depth, unsigned seed) {
  Image img = Image::make(w, h, channels, depth);
  std::mt19937 rng(seed);
  const std::size_t samples = std::size_t{w} * h * static_cast<std::size_t>(channels);
  for (std::size_t i = 0; i < samples; ++i) {
    const std::size_t x = (i / static_cast<std::size_t>(channels)) % w, y = i / (std::size_t{w} * static_cast<std::size_t>(channels));
    const auto v = static_cast<unsigned>(x * 3 + y * 2 + (i % static_cast<std::size_t>(channels)) * 40 + rng() % 7);
    if (depth == 8) {
      img.pixels[i] = static_cast<std::uint8_t>(v);
    } else {
      const auto v16 = static_cast<std::uint16_t>(v * 257u);
      std::memcpy(img.pixels.data() + 2 * i, &v16, 2);
    }
  }
  return img;
}

// The zlib stream of all IDAT chunks, inflated: per row, one filter byte and the residuals.
std::vector<std::uint8_t> inflate_idat(const std::vector<std::byte>& png) {
  std::vector<std::uint8_t> z;
  std::size_t at = 8;  // signature
  while (at + 12 <= png.size()) {
    const auto* p = reinterpret_cast<const std::uint8_t*>(png.data() + at);
    const std::size_t length = (std::size_t{p[0]} << 24) | (std::size_t{p[1]} << 16) | (std::size_t{p[2]} << 8) | p[3];
    if (std::memcmp(p + 4, "IDAT", 4) == 0) z.insert(z.end(), p + 8, p + 8 + length);
    at += 12 + length;
  }
  std::vector<std::uint8_t> out(1 << 20);
  uLongf size = static_cast<uLongf>(out.size());
  if (uncompress(out.data(), &size, z.data(), static_cast<uLong>(z.size())) != Z_OK)
    throw std::runtime_error("IDAT does not inflate");
  out.resize(size);
  return out;
}

// PNG's filter type byte for a single filter (none 0, sub 1, up 2, average 3, paeth 4).
int filter_byte(PngFilter f) {
  switch (f) {
    case PngFilter::none: return 0;
    case PngFilter::sub: return 1;
    case PngFilter::up: return 2;
    case PngFilter::average: return 3;
    case PngFilter::paeth: return 4;
    default: return -1;
  }
}

TEST(PngEncodeChoices, EveryFilterStrategyAndLevelIsLossless) {
  int cases = 0, refused = 0;
  for (int channels = 1; channels <= 4; ++channels)
    for (int depth : {8, 16}) {
      const unsigned seed = static_cast<unsigned>(channels * 31 + depth);
      const Image images[] = {random_image(37, 23, channels, depth, seed), photo_like(41, 29, channels, depth, seed)};
      for (const Image& img : images)
        for (PngFilter f : kFilters)
          for (PngStrategy s : kStrategies)
            for (int level = 0; level <= 9; ++level) {
              const bool interlaced = (level + static_cast<int>(s)) % 3 == 0;  // a third of them Adam7
              const PngWriteOptions o{.compression = level, .interlaced = interlaced, .filter = f, .strategy = s};
              const bool adaptive = f == PngFilter::all || (f == PngFilter::automatic && level >= 2);
              if (s == PngStrategy::fast && (adaptive || interlaced)) {
                EXPECT_THROW((void)encode_png(img, o), std::invalid_argument);  // one fixed filter, not Adam7
                ++refused;
                continue;
              }
              const Image back = decode_image(encode_png(img, o));
              ASSERT_EQ(back.channels, channels);
              ASSERT_EQ(back.bit_depth, depth);
              ASSERT_EQ(back.width, img.width);
              ASSERT_EQ(back.height, img.height);
              ASSERT_EQ(back.pixels, img.pixels) << channels << " channels, " << depth << " bits, filter "
                                                 << to_string(f) << ", strategy " << to_string(s) << ", level "
                                                 << level << (interlaced ? ", interlaced" : "");
              ++cases;
            }
    }
  EXPECT_EQ(cases + refused, 4 * 2 * 2 * 7 * 6 * 10);
  EXPECT_GT(cases, 4 * 2 * 2 * 7 * 5 * 10);  // the fast encoder ran too
}

TEST(PngEncodeChoices, TheFileHoldsTheFilterAskedFor) {
  for (int channels : {1, 3})
    for (int level : {0, 1, 6}) {
      const Image img = photo_like(53, 31, channels, 8, static_cast<unsigned>(level + channels));
      for (PngFilter f : kFilters) {
        const PngWriteOptions o{.compression = level, .filter = f};
        const PngEncoding e = resolve_png_encoding(o);
        const auto raw = inflate_idat(encode_png(img, o));
        ASSERT_EQ(raw.size(), img.height * (1 + img.row_bytes()));
        std::set<int> seen;
        for (std::size_t y = 0; y < img.height; ++y) seen.insert(raw[y * (1 + img.row_bytes())]);
        if (e.filter == PngFilter::all) {
          // Adaptive: several filters win on these rows, and none is invalid.
          EXPECT_GT(seen.size(), 1u) << "level " << level;
          EXPECT_LE(*seen.rbegin(), 4);
        } else {
          EXPECT_EQ(seen, std::set<int>{filter_byte(e.filter)})
              << "filter " << to_string(f) << " resolved to " << to_string(e.filter) << ", level " << level;
        }
      }
    }
}

TEST(PngEncodeChoices, TheStrategyReachesZlib) {
  // A flat image is one long run: zlib's matchers shrink it to a few bytes, Huffman-only
  // coding cannot go below one bit per byte.
  Image flat = Image::make(256, 64, 1, 8);
  std::fill(flat.pixels.begin(), flat.pixels.end(), std::uint8_t{77});
  const auto size = [&](PngStrategy s) {
    return encode_png(flat, {.compression = 6, .filter = PngFilter::none, .strategy = s}).size();
  };
  const std::size_t huffman = size(PngStrategy::huffman);
  EXPECT_GE(huffman, flat.pixels.size() / 8);
  for (PngStrategy s : {PngStrategy::deflate, PngStrategy::filtered, PngStrategy::rle, PngStrategy::fast,
                        PngStrategy::automatic})
    EXPECT_LT(size(s) * 4, huffman) << to_string(s);
  // Level 0 stores, whatever the strategy.
  EXPECT_GT(encode_png(flat, {.compression = 0, .strategy = PngStrategy::rle}).size(), flat.pixels.size());
}

TEST(PngEncodeChoices, AutomaticChoicesFollowTheTable) {
  for (int level = 0; level <= 9; ++level) {
    const PngEncoding e = resolve_png_encoding({.compression = level});
    EXPECT_EQ(e.level, level);
    const PngFilter want_filter = level == 0 ? PngFilter::none : level == 1 ? PngFilter::up : PngFilter::all;
    const PngStrategy want_strategy = level == 0   ? PngStrategy::deflate
                                      : level == 1 ? PngStrategy::fast
                                      : level == 2 ? PngStrategy::rle
                                                   : PngStrategy::filtered;
    EXPECT_EQ(e.filter, want_filter) << "level " << level;
    EXPECT_EQ(e.strategy, want_strategy) << "level " << level;
  }
  // Explicit choices are kept; an explicit unfiltered run gets zlib's plain strategy.
  const PngEncoding e = resolve_png_encoding({.compression = 1, .filter = PngFilter::paeth, .strategy = PngStrategy::huffman});
  EXPECT_EQ(e.filter, PngFilter::paeth);
  EXPECT_EQ(e.strategy, PngStrategy::huffman);
  EXPECT_EQ(resolve_png_encoding({.compression = 4, .filter = PngFilter::none}).strategy, PngStrategy::deflate);
  EXPECT_EQ(resolve_png_encoding({.compression = 4, .filter = PngFilter::sub}).strategy, PngStrategy::filtered);
  EXPECT_EQ(resolve_png_encoding({.compression = 1, .filter = PngFilter::all}).strategy, PngStrategy::rle);
  EXPECT_EQ(resolve_png_encoding({.compression = 2, .filter = PngFilter::none}).strategy, PngStrategy::rle);
  // The fast encoder writes one fixed filter and no Adam7: level 1 falls back to rle there,
  // and an explicit request for it is refused.
  EXPECT_EQ(resolve_png_encoding({.compression = 1, .interlaced = true}).strategy, PngStrategy::rle);
  EXPECT_EQ(resolve_png_encoding({.compression = 1, .filter = PngFilter::paeth}).strategy, PngStrategy::fast);
  EXPECT_THROW((void)resolve_png_encoding({.compression = 1, .interlaced = true, .strategy = PngStrategy::fast}),
               std::invalid_argument);
  EXPECT_THROW((void)resolve_png_encoding({.compression = 5, .filter = PngFilter::all, .strategy = PngStrategy::fast}),
               std::invalid_argument);
}

TEST(PngEncodeChoices, RejectsLevelsOutsideZeroToNine) {
  const Image img = random_image(3, 3, 1, 8, 1);
  for (int level : {-1, 10}) {
    EXPECT_THROW((void)resolve_png_encoding({.compression = level}), std::invalid_argument);
    EXPECT_THROW((void)encode_png(img, {.compression = level}), std::invalid_argument);
  }
}

TEST(PngEncodeChoices, NamesParseAndPrint) {
  for (PngFilter f : kFilters) EXPECT_EQ(parse_png_filter(to_string(f)), f);
  for (PngStrategy s : kStrategies) EXPECT_EQ(parse_png_strategy(to_string(s)), s);
  EXPECT_EQ(to_string(PngFilter::average), "avg");
  EXPECT_EQ(parse_png_filter("average"), PngFilter::average);
  EXPECT_EQ(to_string(PngStrategy::deflate), "default");
  EXPECT_EQ(parse_png_strategy("deflate"), PngStrategy::deflate);
  EXPECT_EQ(parse_png_filter("auto"), PngFilter::automatic);
  EXPECT_FALSE(parse_png_filter("Paeth"));
  EXPECT_FALSE(parse_png_filter(""));
  EXPECT_FALSE(parse_png_filter("adaptive"));
  EXPECT_FALSE(parse_png_strategy("FAST"));
  EXPECT_FALSE(parse_png_strategy("RLE"));
}

}  // namespace
}  // namespace streampipe::io
