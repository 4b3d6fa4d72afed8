// SPDX-License-Identifier: Apache-2.0
// Mandelbrot: the host reference against known points, parameter errors, the comparison,
// the colour map.

#include "streampipe/tools/mandelbrot/compute.hpp"

#include <gtest/gtest.h>

#include <limits>

namespace streampipe::tools::mandelbrot {
namespace {

TEST(MandelbrotHost, KnownPoints) {
  // A 3x1 image with pixel centres at c = -1, 0, 1 (+0i): -1 and 0 never escape; for c = 1,
  // z = 0, 1, 2, 5: |z|^2 first exceeds 4 at i = 3.
  Params p;
  p.width = 3;
  p.height = 1;
  p.region = Region{-1.5, 1.5, -0.5, 0.5};
  p.max_iterations = 100;
  for (const Precision prec : {Precision::double_, Precision::single}) {
    const auto counts = compute_host(p, prec, 1);
    EXPECT_EQ(counts, (std::vector<std::uint32_t>{100, 100, 3})) << to_string(prec);
  }
  // c = 2: z = 0, 2, 6 -> escapes at i = 2 (|2|^2 = 4 is not > 4).
  p.width = 1;
  p.region = Region{1.5, 2.5, -0.5, 0.5};
  EXPECT_EQ(compute_host(p, Precision::double_, 1), std::vector<std::uint32_t>{2});
}

TEST(MandelbrotHost, ThreadsDoNotChangeTheResult) {
  Params p;
  p.width = 301;
  p.height = 199;
  p.max_iterations = 500;
  EXPECT_EQ(compute_host(p, Precision::double_, 1), compute_host(p, Precision::double_, 5));
}

TEST(MandelbrotHost, ParameterErrors) {
  Params p;
  p.width = 0;
  EXPECT_THROW(p.validate(), std::invalid_argument);
  p.width = 10;
  p.max_iterations = 0;
  EXPECT_THROW(p.validate(), std::invalid_argument);
  p.max_iterations = 10;
  p.region = Region{1, 0, 0, 1};
  EXPECT_THROW(p.validate(), std::invalid_argument);
  p.region = Region{0, 1, 0, std::numeric_limits<double>::infinity()};
  EXPECT_THROW(p.validate(), std::invalid_argument);
  EXPECT_THROW((void)Region::centered(0, 0, -1, 10, 10), std::invalid_argument);
  const Region r = Region::centered(-0.5, 0.25, 3.0, 300, 200);
  EXPECT_DOUBLE_EQ(r.x0, -2.0);
  EXPECT_DOUBLE_EQ(r.x1, 1.0);
  EXPECT_DOUBLE_EQ(r.y0, -0.75);
  EXPECT_DOUBLE_EQ(r.y1, 1.25);
  EXPECT_EQ(parse_precision("float"), Precision::single);
  EXPECT_FALSE(parse_precision("half"));
}

TEST(MandelbrotHost, CompareCountsBoundaryDifferences) {
  // 3x3 reference with one odd pixel in the corner; differences at the centre (a boundary
  // pixel: its neighbourhood holds two counts) and ... all pixels are within one of it.
  const std::vector<std::uint32_t> ref = {5, 5, 5, 5, 5, 5, 5, 5, 9};
  std::vector<std::uint32_t> got = ref;
  got[0] = 7;  // (0,0): neighbours all 5 -> not on a boundary
  got[4] = 4;  // (1,1): neighbour (2,2) is 9 -> boundary
  const Comparison c = compare(ref, got, 3, 3);
  EXPECT_EQ(c.differing, 2u);
  EXPECT_EQ(c.differing_boundary, 1u);
  EXPECT_EQ(c.max_difference, 2u);
  EXPECT_THROW((void)compare(ref, got, 2, 3), std::invalid_argument);
}

TEST(MandelbrotHost, FloatDiffersFromDoubleMostlyOnBoundaries) {
  Params p;
  p.width = 400;
  p.height = 300;
  p.max_iterations = 256;
  const auto ref = compute_host(p, Precision::double_);
  const auto f = compute_host(p, Precision::single);
  const Comparison c = compare(ref, f, p.width, p.height);
  EXPECT_LT(c.differing, p.pixels() / 100) << "float should differ on under 1% of this view";
}

TEST(MandelbrotHost, ColourMapPaintsTheSetBlack) {
  const std::vector<std::uint32_t> counts = {10, 10, 0, 3};
  const io::Image img = colorize(counts, 2, 2, 10);
  ASSERT_EQ(img.channels, 3);
  for (int c = 0; c < 6; ++c) EXPECT_EQ(img.pixels[static_cast<std::size_t>(c)], 0);
  EXPECT_EQ(img.pixels[6], 0);  // count 0 starts the palette at (0, 7, 100)
  EXPECT_EQ(img.pixels[7], 7);
  EXPECT_EQ(img.pixels[8], 100);
  EXPECT_NE(img.pixels[9] + img.pixels[10] + img.pixels[11], 0);
}

}  // namespace
}  // namespace streampipe::tools::mandelbrot
