// SPDX-License-Identifier: Apache-2.0
#include "streampipe/serving/mlp_reference.hpp"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <limits>
#include <vector>

namespace streampipe::serving {
namespace {

TEST(Bf16, RoundsToNearestEven) {
  EXPECT_EQ(to_bf16(1.0f), 0x3f80);
  EXPECT_EQ(to_bf16(-2.0f), 0xc000);
  // Exactly half-way: ties go to the even mantissa.
  EXPECT_EQ(to_bf16(std::bit_cast<float>(0x3f808000u)), 0x3f80);
  EXPECT_EQ(to_bf16(std::bit_cast<float>(0x3f818000u)), 0x3f82);
  // Just above half-way rounds up.
  EXPECT_EQ(to_bf16(std::bit_cast<float>(0x3f808001u)), 0x3f81);
  EXPECT_TRUE(std::isnan(from_bf16(to_bf16(std::numeric_limits<float>::quiet_NaN()))));
  EXPECT_TRUE(std::isinf(from_bf16(to_bf16(std::numeric_limits<float>::infinity()))));
  EXPECT_EQ(round_bf16(3.0f), 3.0f);
}

TEST(MlpReference, TwoLayersByHand) {
  // 2 -> 2 (ReLU) -> 1, with values exact in bf16.
  MlpWeights w;
  w.layers.push_back({2, 2, {to_bf16(1), to_bf16(-1), to_bf16(0.5f), to_bf16(2)}, {to_bf16(0), to_bf16(1)}});
  w.layers.push_back({2, 1, {to_bf16(3), to_bf16(-1)}, {to_bf16(0.25f)}});
  const std::vector<float> in = {2, 4};
  std::vector<float> out(1);
  mlp_reference(w, in, out);
  // hidden = relu([2 - 4 + 0, 1 + 8 + 1]) = [0, 10]; out = 0*3 - 10 + 0.25
  EXPECT_EQ(out[0], -9.75f);
  EXPECT_DOUBLE_EQ(w.flops_per_row(), 2.0 * (2 * 2 + 2 * 1));
}

TEST(MlpReference, WeightsAreDeterministicAndScaled) {
  const auto a = make_mlp_weights({64, 32, 16}, 7), b = make_mlp_weights({64, 32, 16}, 7);
  const auto c = make_mlp_weights({64, 32, 16}, 8);
  ASSERT_EQ(a.layers.size(), 2u);
  EXPECT_EQ(a.layers[0].weights, b.layers[0].weights);
  EXPECT_NE(a.layers[0].weights, c.layers[0].weights);
  EXPECT_EQ(a.input_size(), 64u);
  EXPECT_EQ(a.output_size(), 16u);
  for (auto bits : a.layers[0].weights) EXPECT_LE(std::fabs(from_bf16(bits)), 1.0f / 8.0f + 1e-3f);
  EXPECT_THROW((void)make_mlp_weights({64}, 1), std::invalid_argument);
  EXPECT_THROW((void)make_mlp_weights({64, 0}, 1), std::invalid_argument);
  std::vector<float> in(10), out(16);
  EXPECT_THROW(mlp_reference(a, in, out), std::invalid_argument);
}

TEST(MlpReference, ToleranceCheck) {
  const std::vector<float> want = {1.0f, -2.0f, 0.0f, 4.0f};
  std::vector<float> got = want;
  double worst = -1;
  EXPECT_TRUE(mlp_output_matches(got, want, 0.03, &worst));
  EXPECT_EQ(worst, 0.0);
  got[1] = -2.02f;
  EXPECT_TRUE(mlp_output_matches(got, want));
  got[1] = -3.0f;
  EXPECT_FALSE(mlp_output_matches(got, want, 0.03, &worst));
  EXPECT_GT(worst, 1.0);
  got = want;
  got[2] = std::numeric_limits<float>::quiet_NaN();
  EXPECT_FALSE(mlp_output_matches(got, want));
}

}  // namespace
}  // namespace streampipe::serving
