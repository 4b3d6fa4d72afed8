// SPDX-License-Identifier: Apache-2.0
// Luma-only JPEG decoding (ImageReadOptions::jpeg_luma): a YCbCr JPEG's Y plane against the
// BT.601 luma (ops::luma_bt601, gray's own) of its RGB decode, on files of every coding choice
// written here with libjpeg-turbo: within 1 level on every pixel where no decoded channel
// clips; other colour spaces decode to RGB exactly as without the option; the decode budget
// holds one byte per pixel for a luma decode.

#include "jpeg_recipes.hpp"

#include "streampipe/io/decode_budget.hpp"
#include "streampipe/io/image.hpp"
#include "streampipe/ops/rgb_to_gray.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <iostream>
#include <utility>

namespace streampipe::io {
namespace {

using testing::every_jpeg_recipe;
using testing::in_gamut_photo;
using testing::JpegRecipe;
using testing::write_jpeg_recipe;

ImageReadOptions luma_options() {
  ImageReadOptions o;
  o.jpeg_luma = true;
  return o;
}

// The luma of a decoded image as gray computes it: a gray image's own values, an RGB one's
// BT.601 luma.
std::vector<std::uint8_t> luma_of(const Image& decoded) {
  if (decoded.channels == 1) return decoded.pixels;
  std::vector<std::uint8_t> y(std::size_t{decoded.width} * decoded.height);
  for (std::size_t i = 0; i < y.size(); ++i)
    y[i] = ops::luma_bt601(decoded.pixels[3 * i], decoded.pixels[3 * i + 1], decoded.pixels[3 * i + 2]);
  return y;
}

bool clipped(const Image& rgb, std::size_t pixel) {
  for (std::size_t c = 0; c < 3; ++c) {
    const std::uint8_t v = rgb.pixels[3 * pixel + c];
    if (v == 0 || v == 255) return true;
  }
  return false;
}

bool decodes_to_luma(const JpegRecipe& recipe) {
  return recipe.written == JCS_YCbCr || recipe.written == JCS_GRAYSCALE;
}

constexpr std::pair<std::uint32_t, std::uint32_t> kSizes[] = {{1, 1},   {2, 3},    {17, 9},  {8, 8},
                                                              {31, 1},  {64, 48},  {333, 211}, {129, 67}};

TEST(JpegLuma, EveryCodingWithinOneLevelOfTheRgbDecodesLuma) {
  unsigned seed = 1;
  for (const JpegRecipe& recipe : every_jpeg_recipe()) {
    int worst = 0;
    std::size_t differing = 0, pixels = 0;
    for (const auto& [w, h] : kSizes) {
      const auto jpeg = write_jpeg_recipe(in_gamut_photo(w, h, seed++), recipe);
      const Image rgb = decode_image(jpeg, {}, recipe.name);
      const Image luma = decode_image(jpeg, luma_options(), recipe.name);
      ASSERT_EQ(luma.width, w) << recipe.name;
      ASSERT_EQ(luma.height, h) << recipe.name;
      if (!decodes_to_luma(recipe)) {
        // CMYK, YCCK, RGB: the RGB path, untouched.
        EXPECT_EQ(luma.channels, 3) << recipe.name;
        EXPECT_EQ(luma.pixels, rgb.pixels) << recipe.name << " " << w << "x" << h;
        continue;
      }
      ASSERT_EQ(luma.channels, 1) << recipe.name;
      const auto want = luma_of(rgb);
      for (std::size_t i = 0; i < want.size(); ++i) {
        ASSERT_FALSE(rgb.channels == 3 && clipped(rgb, i))
            << recipe.name << " " << w << "x" << h << ": the in-gamut content clipped at pixel " << i;
        const int d = std::abs(static_cast<int>(luma.pixels[i]) - static_cast<int>(want[i]));
        worst = std::max(worst, d);
        differing += d != 0 ? 1 : 0;
      }
      pixels += want.size();
    }
    std::cout << recipe.name << ": luma-only decode vs the RGB decode's luma over " << pixels << " pixels: max "
              << worst << " level(s), " << differing << " pixel(s) differ\n";
    EXPECT_LE(worst, 1) << recipe.name;
  }
}

// Saturated colours: JPEG's loss leaves some decoded colours outside RGB's range, libjpeg
// clips them in the RGB decode, and the luma of the clipped colour is no longer the file's
// Y. The rule of docs/gray.md: within 1 level wherever no channel clipped.
TEST(JpegLuma, OnlyClippedColoursDepartByMoreThanOneLevel) {
  Image noise = Image::make(96, 64, 3, 8);
  unsigned state = 12345;
  for (auto& b : noise.pixels) b = static_cast<std::uint8_t>((state = state * 1103515245u + 12345u) >> 16);
  const JpegRecipe recipe{"420-q75-noise", JCS_YCbCr, 2, 2, false, 0, false, 75};
  const auto jpeg = write_jpeg_recipe(noise, recipe);
  const Image rgb = decode_image(jpeg);
  const Image luma = decode_image(jpeg, luma_options());
  ASSERT_EQ(luma.channels, 1);
  const auto want = luma_of(rgb);
  int worst_unclipped = 0, worst_clipped = 0;
  for (std::size_t i = 0; i < want.size(); ++i) {
    const int d = std::abs(static_cast<int>(luma.pixels[i]) - static_cast<int>(want[i]));
    int& worst = clipped(rgb, i) ? worst_clipped : worst_unclipped;
    worst = std::max(worst, d);
  }
  std::cout << "random colours, q75 4:2:0: max " << worst_unclipped << " level(s) where no channel clipped, "
            << worst_clipped << " where one did\n";
  EXPECT_LE(worst_unclipped, 1);
  EXPECT_GT(worst_clipped, 1) << "the clipping this test is about did not happen";
}

TEST(JpegLuma, ALumaDecodeHoldsOneBytePerPixelOfTheBudget) {
  const auto jpeg = write_jpeg_recipe(in_gamut_photo(200, 100, 3), {"420"});
  ImageReadOptions o = luma_options();
  o.limits.budget = std::make_shared<DecodeBudget>(30000, "a test's budget");
  {
    const Image luma = decode_image(jpeg, o, "luma.jpg");
    EXPECT_EQ(luma.channels, 1);
    EXPECT_EQ(o.limits.budget->held(), 20000u);
  }
  EXPECT_EQ(o.limits.budget->held(), 0u);
  o.jpeg_luma = false;  // RGB: 60,000 bytes, more than the whole budget
  try {
    (void)decode_image(jpeg, o, "rgb.jpg");
    ADD_FAILURE() << "an RGB decode of 60000 bytes fitted a budget of 30000";
  } catch (const ImageError& e) {
    EXPECT_NE(std::string(e.what()).find("(60000 bytes), more than"), std::string::npos) << e.what();
  }
  EXPECT_EQ(o.limits.budget->held(), 0u);
}

}  // namespace
}  // namespace streampipe::io
