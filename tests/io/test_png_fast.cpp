// SPDX-License-Identifier: Apache-2.0
// The fast PNG encoder (PngStrategy::fast, level 1's default): its zlib stream inflates
// with zlib (which checks the Adler-32) to exactly the filter bytes and residuals, libpng
// reads every file back exactly (and checks each chunk's CRC), and the deflate handles what
// stresses it: runs of every length across block boundaries, skewed histograms whose
// Huffman tree must be cut to 15 bits, incompressible data, several IDAT chunks.

#include "streampipe/io/image.hpp"

#include <gtest/gtest.h>
#include <zlib.h>

#include <algorithm>
#include <cstring>
#include <random>
#include <stdexcept>
#include <vector>

namespace streampipe::io {
namespace {

constexpr PngWriteOptions kFast{.compression = 1, .filter = PngFilter::none, .strategy = PngStrategy::fast};

struct Chunks {
  std::vector<std::uint8_t> zlib;  // all IDAT data, in order
  int idat_chunks = 0;
};

Chunks idat_of(const std::vector<std::byte>& png) {
  Chunks c;
  std::size_t at = 8;
  while (at + 12 <= png.size()) {
    const auto* p = reinterpret_cast<const std::uint8_t*>(png.data() + at);
    const std::size_t length = (std::size_t{p[0]} << 24) | (std::size_t{p[1]} << 16) | (std::size_t{p[2]} << 8) | p[3];
    if (std::memcmp(p + 4, "IDAT", 4) == 0) {
      c.zlib.insert(c.zlib.end(), p + 8, p + 8 + length);
      ++c.idat_chunks;
    }
    at += 12 + length;
  }
  return c;
}

// zlib's inflate of the whole stream; throws unless it ends exactly (checksum included).
std::vector<std::uint8_t> inflate_all(const std::vector<std::uint8_t>& z, std::size_t expected) {
  std::vector<std::uint8_t> out(expected + 1);
  uLongf size = static_cast<uLongf>(out.size());
  const int rc = uncompress(out.data(), &size, z.data(), static_cast<uLong>(z.size()));
  if (rc != Z_OK) throw std::runtime_error("zlib refused the stream: " + std::to_string(rc));
  out.resize(size);
  return out;
}

// Encodes with the fast encoder and checks the stream and the round trip; returns the file.
std::vector<std::byte> check_round_trip(const Image& img, PngFilter filter = PngFilter::none) {
  PngWriteOptions o = kFast;
  o.filter = filter;
  const auto png = encode_png(img, o);
  const Chunks c = idat_of(png);
  const auto raw = inflate_all(c.zlib, img.height * (img.row_bytes() + 1));
  EXPECT_EQ(raw.size(), img.height * (img.row_bytes() + 1));
  if (filter == PngFilter::none && img.bit_depth == 8)  // the stream is the rows themselves
    for (std::size_t y = 0; y < img.height && y < 4; ++y) {
      const std::uint8_t* row = raw.data() + y * (img.row_bytes() + 1);
      EXPECT_EQ(row[0], 0);
      EXPECT_EQ(std::memcmp(row + 1, img.pixels.data() + y * img.row_bytes(), img.row_bytes()), 0) << "row " << y;
    }
  const Image back = decode_image(png);
  EXPECT_EQ(back.width, img.width);
  EXPECT_EQ(back.height, img.height);
  EXPECT_EQ(back.channels, img.channels);
  EXPECT_EQ(back.bit_depth, img.bit_depth);
  EXPECT_TRUE(back.pixels == img.pixels);
  return png;
}

TEST(PngFast, TinyImages) {
  for (std::uint32_t w : {1u, 2u, 3u, 7u})
    for (std::uint32_t h : {1u, 2u, 5u}) {
      Image img = Image::make(w, h, 1, 8);
      for (std::size_t i = 0; i < img.pixels.size(); ++i) img.pixels[i] = static_cast<std::uint8_t>(i * 37);
      for (PngFilter f : {PngFilter::none, PngFilter::sub, PngFilter::up, PngFilter::average, PngFilter::paeth})
        check_round_trip(img, f);
    }
}

TEST(PngFast, RunsOfEveryLengthAcrossBlockBoundaries) {
  // Runs of 1..300 bytes, each of a new value, then one flat 2 MB area: every length code
  // and its extra bits, runs longer than one match, and runs that cross the 256 KiB blocks.
  Image img = Image::make(4096, 600, 1, 8);
  std::size_t i = 0;
  std::uint8_t value = 1;
  for (std::size_t run = 1; run <= 300 && i < img.pixels.size(); ++run, ++value)
    for (std::size_t k = 0; k < run && i < img.pixels.size(); ++k) img.pixels[i++] = value;
  const auto png = check_round_trip(img);
  EXPECT_LT(png.size(), img.pixels.size() / 50);  // the flat part is runs, the rest short
}

TEST(PngFast, SkewedHistogramsAreCutTo15Bits) {
  // Byte k appears about 1.6^k times: an unrestricted Huffman tree would be ~25 deep.
  Image img = Image::make(1024, 512, 1, 8);
  std::size_t i = 0;
  double count = 1;
  for (int k = 0; k < 30 && i < img.pixels.size(); ++k, count *= 1.6)
    for (std::size_t n = 0; n < static_cast<std::size_t>(count) && i < img.pixels.size(); ++n)
      img.pixels[i++] = static_cast<std::uint8_t>(k * 2 + (n % 2));  // alternate: no runs
  std::mt19937 rng(5);
  std::shuffle(img.pixels.begin(), img.pixels.end(), rng);
  check_round_trip(img);
}

TEST(PngFast, IncompressibleDataBarelyGrowsAndSpansSeveralIdatChunks) {
  Image img = Image::make(1500, 1000, 3, 8);
  std::mt19937 rng(7);
  for (auto& b : img.pixels) b = static_cast<std::uint8_t>(rng());
  const auto png = check_round_trip(img);
  EXPECT_GT(idat_of(png).idat_chunks, 1);
  EXPECT_LT(png.size(), img.pixels.size() + img.pixels.size() / 50 + 4096);
}

TEST(PngFast, SixteenBitAndAlphaLayouts) {
  std::mt19937 rng(3);
  for (int channels = 1; channels <= 4; ++channels) {
    Image img = Image::make(333, 77, channels, 16);
    for (std::size_t i = 0; i < img.pixels.size(); ++i)
      img.pixels[i] = static_cast<std::uint8_t>(i % 2 == 0 ? (i / 7) & 0xff : rng() % 3);
    for (PngFilter f : {PngFilter::up, PngFilter::paeth}) check_round_trip(img, f);
  }
}

TEST(PngFast, PhotosCompressAboutAsWellAsZlibRuns) {
  // Gradients with grain, up filter: the fast encoder codes the same runs as zlib's Z_RLE,
  // with codes fitted per 256 KiB instead of per 16-64 KiB, so its size stays close.
  Image img = Image::make(1920, 1080, 1, 8);
  std::mt19937 rng(11);
  for (std::size_t y = 0; y < img.height; ++y)
    for (std::size_t x = 0; x < img.width; ++x)
      img.pixels[y * img.width + x] = static_cast<std::uint8_t>((x / 8 + y / 5) % 200 + rng() % 9);
  const auto fast = check_round_trip(img, PngFilter::up);
  const auto rle = encode_png(img, {.compression = 1, .filter = PngFilter::up, .strategy = PngStrategy::rle});
  EXPECT_LT(fast.size(), rle.size() * 105 / 100) << "fast " << fast.size() << " bytes, zlib rle " << rle.size();
}

}  // namespace
}  // namespace streampipe::io
