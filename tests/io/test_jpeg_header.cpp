// SPDX-License-Identifier: Apache-2.0
// JPEG marker walk: sizes, coding process, precision, components, Adobe transform and
// completeness of libjpeg-turbo files and edited copies; malformed data is refused.

#include "io/jpeg_variants.hpp"

#include "streampipe/io/jpeg_header.hpp"

#include <gtest/gtest.h>

namespace streampipe::io {
namespace {
using namespace testing;

TEST(JpegHeader, ReadsLibjpegOutput) {
  const auto rgb = baseline_jpeg(201, 77, 3, 1);
  const auto h = read_jpeg_header(rgb);
  ASSERT_TRUE(h.has_value());
  EXPECT_EQ(h->width, 201u);
  EXPECT_EQ(h->height, 77u);
  EXPECT_EQ(h->components, 3);
  EXPECT_EQ(h->precision, 8);
  EXPECT_EQ(h->coding, JpegCoding::baseline);
  EXPECT_EQ(h->adobe_transform, -1);
  EXPECT_TRUE(h->jfif);
  EXPECT_FALSE(h->rgb_ids);
  EXPECT_TRUE(h->complete);

  const auto gray = read_jpeg_header(baseline_jpeg(33, 290, 1, 2));
  ASSERT_TRUE(gray.has_value());
  EXPECT_EQ(gray->width, 33u);
  EXPECT_EQ(gray->height, 290u);
  EXPECT_EQ(gray->components, 1);
  EXPECT_TRUE(gray->complete);
}

TEST(JpegHeader, NamesTheCodingProcess) {
  const auto base = baseline_jpeg(64, 48, 3, 3);
  const std::pair<unsigned, JpegCoding> cases[] = {
      {0xC1, JpegCoding::extended},     {0xC2, JpegCoding::progressive},  {0xC3, JpegCoding::lossless},
      {0xC5, JpegCoding::hierarchical}, {0xCF, JpegCoding::hierarchical}, {0xC9, JpegCoding::arithmetic},
      {0xCA, JpegCoding::arithmetic},   {0xCB, JpegCoding::arithmetic}};
  for (const auto& [sof, coding] : cases) {
    const auto h = read_jpeg_header(with_sof(base, sof));
    ASSERT_TRUE(h.has_value()) << sof;
    EXPECT_EQ(h->coding, coding) << sof;
    EXPECT_EQ(h->width, 64u) << sof;
  }
  EXPECT_STREQ(to_string(JpegCoding::progressive), "progressive");
}

TEST(JpegHeader, PrecisionAdobeTransformAndCompleteness) {
  const auto base = baseline_jpeg(150, 101, 3, 4);
  EXPECT_EQ(read_jpeg_header(with_precision(base, 12))->precision, 12);
  for (const unsigned t : {0u, 1u, 2u}) {
    const auto h = read_jpeg_header(with_adobe(base, t));
    ASSERT_TRUE(h.has_value());
    EXPECT_EQ(h->adobe_transform, static_cast<int>(t));
    EXPECT_EQ(h->width, 150u);
  }
  const auto bare = read_jpeg_header(with_rgb_ids(without_jfif(base)));
  ASSERT_TRUE(bare.has_value());
  EXPECT_FALSE(bare->jfif);
  EXPECT_TRUE(bare->rgb_ids);
  EXPECT_EQ(bare->width, 150u);
  EXPECT_TRUE(bare->complete);
  const auto cut = read_jpeg_header(truncated(base));
  ASSERT_TRUE(cut.has_value());
  EXPECT_FALSE(cut->complete);
  EXPECT_EQ(cut->height, 101u);
}

TEST(JpegHeader, RefusesMalformedData) {
  const auto base = baseline_jpeg(40, 30, 3, 5);
  EXPECT_FALSE(read_jpeg_header({}).has_value());
  EXPECT_FALSE(read_jpeg_header(std::span(base).first(2)).has_value());       // SOI only
  EXPECT_FALSE(read_jpeg_header(std::span(base).first(30)).has_value());      // a segment past the end
  const auto sos = find_marker(base, 0xDA);
  EXPECT_FALSE(read_jpeg_header(std::span(base).first(sos + 3)).has_value()); // scan header cut
  std::vector<std::byte> png = encode_png(Image::make(3, 3, 3, 8));
  EXPECT_FALSE(read_jpeg_header(png).has_value());
  // A scan before any frame header.
  auto no_frame = base;
  const auto sof = find_marker(no_frame, 0xC0);
  no_frame[sof + 1] = std::byte{0xE5};  // the frame becomes an APP5 segment
  EXPECT_FALSE(read_jpeg_header(no_frame).has_value());
  // Garbage where a marker should be.
  auto garbage = base;
  garbage[2] = std::byte{0x12};
  EXPECT_FALSE(read_jpeg_header(garbage).has_value());
}

}  // namespace
}  // namespace streampipe::io
