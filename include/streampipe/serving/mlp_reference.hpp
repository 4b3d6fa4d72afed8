// SPDX-License-Identifier: Apache-2.0
#pragma once
// The multi-layer perceptron that serve-bench batches, on the host: its weights (random,
// from a fixed seed) and a CPU reference of its forward pass. Layer i maps sizes[i] to
// sizes[i+1] as y = x W^T + b, with ReLU on every layer but the last. The GPU runs it in
// bf16 with fp32 accumulation, so the reference rounds exactly where the GPU stores bf16
// (inputs, weights, biases, every layer's output) and accumulates in float.

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace streampipe::serving {

// Round-to-nearest-even float -> bfloat16 bits, and back (NaN stays NaN).
[[nodiscard]] std::uint16_t to_bf16(float x) noexcept;
[[nodiscard]] float from_bf16(std::uint16_t b) noexcept;
[[nodiscard]] inline float round_bf16(float x) noexcept { return from_bf16(to_bf16(x)); }

struct MlpLayer {
  std::size_t in = 0, out = 0;
  std::vector<std::uint16_t> weights;  // out × in, row-major, bf16 bits
  std::vector<std::uint16_t> bias;     // out, bf16 bits
};

struct MlpWeights {
  std::vector<MlpLayer> layers;
  [[nodiscard]] std::size_t input_size() const { return layers.front().in; }
  [[nodiscard]] std::size_t output_size() const { return layers.back().out; }
  // 2 × Σ in·out: floating-point operations per row of a forward pass.
  [[nodiscard]] double flops_per_row() const;
};

// sizes = {input, hidden..., output}: at least two entries, each positive. Weights are
// uniform in ±1/sqrt(in) and biases in ±0.1, so activations stay of order one.
[[nodiscard]] MlpWeights make_mlp_weights(const std::vector<std::size_t>& sizes, std::uint64_t seed);

// One row: in has input_size() floats, out output_size().
void mlp_reference(const MlpWeights& w, std::span<const float> in, std::span<float> out);

// True when `got` matches `want` within bf16 accuracy: |got - want| <= tol × (|want| + rms(want)).
// `worst` receives the largest ratio of error to allowance (<= 1 passes).
[[nodiscard]] bool mlp_output_matches(std::span<const float> got, std::span<const float> want,
                                      double tol = 0.03, double* worst = nullptr);

}  // namespace streampipe::serving
