// SPDX-License-Identifier: Apache-2.0
#pragma once
// Test helpers shared by the GEMM tests on the GPU: random inputs and one MLP layer on the
// host, rounded to bf16 exactly where the GPU stores bf16.

#include "streampipe/serving/mlp_reference.hpp"
#include "streampipe/cuda/device_buffer.hpp"
#include "streampipe/cuda/error.hpp"
#include "streampipe/cuda/stream.hpp"

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

namespace streampipe::serving::test_support {

inline std::vector<float> random_rows(std::size_t n, std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (auto& x : v) x = d(rng);
  return v;
}

// Row `row` of y = [relu](x W^T + b), fp32 accumulation, rounded to bf16.
inline std::vector<float> layer_reference(const MlpLayer& l, const std::vector<std::uint16_t>& x, std::size_t row,
                                          bool relu) {
  std::vector<float> y(l.out);
  for (std::size_t o = 0; o < l.out; ++o) {
    float acc = 0;
    for (std::size_t k = 0; k < l.in; ++k) acc += from_bf16(l.weights[o * l.in + k]) * from_bf16(x[row * l.in + k]);
    acc += from_bf16(l.bias[o]);
    y[o] = round_bf16(relu ? std::max(acc, 0.0f) : acc);
  }
  return y;
}

// One layer (weights from `weight_seed`) and `rows` random bf16 input rows on device 0,
// and room for the output rows (and `spare_rows` more past them).
struct LayerOnDevice {
  LayerOnDevice(std::size_t in, std::size_t out, std::size_t rows_, bool relu_, std::uint32_t weight_seed,
                std::uint32_t input_seed, std::size_t spare_rows = 0)
      : rows(rows_),
        relu(relu_),
        weights(make_mlp_weights({in, out}, weight_seed)),
        device(0),
        stream(device),
        w(device, in * out),
        bias(device, out),
        x(device, rows * in),
        y(device, (rows + spare_rows) * out) {
    const auto& l = weights.layers[0];
    SP_CUDA_CHECK(cudaMemcpy(w.data(), l.weights.data(), w.bytes(), cudaMemcpyHostToDevice));
    SP_CUDA_CHECK(cudaMemcpy(bias.data(), l.bias.data(), bias.bytes(), cudaMemcpyHostToDevice));
    const auto values = random_rows(rows * in, input_seed);
    x_host.resize(values.size());
    for (std::size_t i = 0; i < values.size(); ++i) x_host[i] = to_bf16(values[i]);
    SP_CUDA_CHECK(cudaMemcpy(x.data(), x_host.data(), x.bytes(), cudaMemcpyHostToDevice));
  }

  std::size_t rows;
  bool relu;
  MlpWeights weights;
  Device device;
  Stream stream;
  DeviceBuffer<std::uint16_t> w, bias, x, y;
  std::vector<std::uint16_t> x_host;
};

}  // namespace streampipe::serving::test_support
