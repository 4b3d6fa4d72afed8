// SPDX-License-Identifier: Apache-2.0
#include "streampipe/serving/mlp_reference.hpp"

#include <fmt/format.h>

#include <bit>
#include <cmath>
#include <random>
#include <stdexcept>

namespace streampipe::serving {

std::uint16_t to_bf16(float x) noexcept {
  const auto bits = std::bit_cast<std::uint32_t>(x);
  if (std::isnan(x)) return static_cast<std::uint16_t>((bits >> 16) | 0x40u);
  const std::uint32_t rounding = 0x7fffu + ((bits >> 16) & 1u);
  return static_cast<std::uint16_t>((bits + rounding) >> 16);
}

float from_bf16(std::uint16_t b) noexcept { return std::bit_cast<float>(static_cast<std::uint32_t>(b) << 16); }

double MlpWeights::flops_per_row() const {
  double f = 0;
  for (const auto& l : layers) f += 2.0 * static_cast<double>(l.in) * static_cast<double>(l.out);
  return f;
}

MlpWeights make_mlp_weights(const std::vector<std::size_t>& sizes, std::uint64_t seed) {
  if (sizes.size() < 2) throw std::invalid_argument("an MLP needs at least an input and an output size");
  for (const std::size_t s : sizes)
    if (s == 0) throw std::invalid_argument("MLP layer sizes must be positive");
  std::mt19937_64 rng(seed);
  MlpWeights w;
  for (std::size_t i = 0; i + 1 < sizes.size(); ++i) {
    MlpLayer l;
    l.in = sizes[i];
    l.out = sizes[i + 1];
    const float a = 1.0f / std::sqrt(static_cast<float>(l.in));
    std::uniform_real_distribution<float> weight(-a, a), bias(-0.1f, 0.1f);
    l.weights.resize(l.in * l.out);
    for (auto& v : l.weights) v = to_bf16(weight(rng));
    l.bias.resize(l.out);
    for (auto& v : l.bias) v = to_bf16(bias(rng));
    w.layers.push_back(std::move(l));
  }
  return w;
}

void mlp_reference(const MlpWeights& w, std::span<const float> in, std::span<float> out) {
  if (in.size() != w.input_size() || out.size() != w.output_size())
    throw std::invalid_argument(fmt::format("mlp_reference: got {} in / {} out, the model is {} -> {}",
                                            in.size(), out.size(), w.input_size(), w.output_size()));
  std::vector<float> x(in.size());
  for (std::size_t i = 0; i < in.size(); ++i) x[i] = round_bf16(in[i]);
  std::vector<float> y, row;
  for (std::size_t li = 0; li < w.layers.size(); ++li) {
    const auto& l = w.layers[li];
    const bool relu = li + 1 < w.layers.size();
    y.assign(l.out, 0.0f);
    row.resize(l.in);
    for (std::size_t o = 0; o < l.out; ++o) {
      const std::uint16_t* wr = l.weights.data() + o * l.in;
      float acc = 0.0f;
      for (std::size_t k = 0; k < l.in; ++k) acc += x[k] * from_bf16(wr[k]);
      acc += from_bf16(l.bias[o]);
      if (relu && acc < 0.0f) acc = 0.0f;
      y[o] = round_bf16(acc);
    }
    x.swap(y);
  }
  std::copy(x.begin(), x.end(), out.begin());
}

bool mlp_output_matches(std::span<const float> got, std::span<const float> want, double tol, double* worst) {
  if (got.size() != want.size()) throw std::invalid_argument("mlp_output_matches: sizes differ");
  double sq = 0;
  for (float v : want) sq += static_cast<double>(v) * v;
  const double rms = want.empty() ? 0.0 : std::sqrt(sq / static_cast<double>(want.size()));
  double w = 0;
  for (std::size_t i = 0; i < got.size(); ++i) {
    const double allowed = tol * (std::fabs(static_cast<double>(want[i])) + rms) + 1e-30;
    const double err = std::fabs(static_cast<double>(got[i]) - want[i]);
    if (!std::isfinite(got[i])) {
      w = INFINITY;
      break;
    }
    w = std::max(w, err / allowed);
  }
  if (worst != nullptr) *worst = w;
  return w <= 1.0;
}

}  // namespace streampipe::serving
