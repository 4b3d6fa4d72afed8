// SPDX-License-Identifier: Apache-2.0
#include "streampipe/ops/affine.hpp"
#include "streampipe/ops/multiply_divide.hpp"
#include "streampipe/ops/rgb_to_gray.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace streampipe::ops {
namespace {

TEST(RgbToGray, MatchesBt601RoundedWeights) {
  // Against the floating-point definition: the fixed-point form is within 0.5 level + tiny.
  for (int r = 0; r < 256; r += 5)
    for (int g = 0; g < 256; g += 7)
      for (int b = 0; b < 256; b += 11) {
        const double exact = 0.299 * r + 0.587 * g + 0.114 * b;
        const int got = luma_bt601(static_cast<std::uint8_t>(r), static_cast<std::uint8_t>(g),
                                   static_cast<std::uint8_t>(b));
        ASSERT_LE(std::abs(got - exact), 0.51) << r << "," << g << "," << b;
      }
  EXPECT_EQ(luma_bt601(255, 255, 255), 255);
  EXPECT_EQ(luma_bt601(0, 0, 0), 0);
  EXPECT_EQ(luma_bt601(255, 0, 0), 76);
  EXPECT_EQ(luma_bt601(0, 255, 0), 150);
  EXPECT_EQ(luma_bt601(0, 0, 255), 29);
}

TEST(RgbToGray, HostRejectsMismatchedSpans) {
  std::vector<std::uint8_t> rgb(9), gray(2);
  EXPECT_THROW(rgb_to_gray_host(rgb, gray), std::invalid_argument);
}

TEST(MultiplyDivide, IsIdentityForFiniteInputs) {
  std::vector<float> in = {1.0f, -3.5f, 1e-30f, 3e38f, 0.0f}, out(in.size());
  multiply_divide_host(in, out, 50);
  // 3e38 * 2 overflows to inf, and inf / 2 stays inf: the function is not folded away.
  EXPECT_EQ(out[0], 1.0f);
  EXPECT_EQ(out[1], -3.5f);
  EXPECT_EQ(out[2], 1e-30f);
  EXPECT_TRUE(std::isinf(out[3]));
}

TEST(Affine, HostUsesFusedMultiplyAdd) {
  std::vector<float> x = {1.0f, 2.0f}, y(2);
  affine_host(x, y, 3.0f, 0.5f);
  EXPECT_EQ(y[0], 3.5f);
  EXPECT_EQ(y[1], 6.5f);
}

}  // namespace
}  // namespace streampipe::ops
