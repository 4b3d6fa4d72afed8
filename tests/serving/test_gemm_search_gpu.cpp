// SPDX-License-Identifier: Apache-2.0
// The MLP's GEMM algorithm search on the GPU: every candidate it would time (the
// heuristic's answers, split-K ones included, their unsplit twins and kernel options)
// computes the layer's CPU reference; the choice keeps the heuristic's first answer unless
// a candidate beats it by kGemmSearchMinGain; the searched MLP of 4096-wide layers matches
// the reference at 1, 3, 17 and 256 rows; layers of one shape share one search; prepare()
// works while the lane's stream is being captured. Outputs are poisoned (NaN) before every
// run; inputs are random.

#include "gemm_algorithm_search.hpp"
#include "gemm_test_support.hpp"

#include "streampipe/serving/mlp_model.hpp"
#include "streampipe/serving/mlp_reference.hpp"
#include "streampipe/cuda/device_buffer.hpp"
#include "streampipe/cuda/error.hpp"
#include "streampipe/cuda/graph.hpp"
#include "streampipe/cuda/stream.hpp"
#include "support/gpu.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <iostream>
#include <limits>
#include <random>
#include <vector>

namespace streampipe::serving {
namespace {

using test_support::layer_reference;
using test_support::random_rows;

// One 4096 -> 4096 layer set up the way the MLP lane sets it up.
struct LayerSetup : test_support::LayerOnDevice {
  static constexpr std::size_t kSize = 4096;
  static constexpr std::int64_t kLd = 4096;
  explicit LayerSetup(std::size_t rows_, bool relu_)
      : LayerOnDevice(kSize, kSize, rows_, relu_, 29, 5),
        workspace(device, detail::kWorkspaceBytes),
        handle(detail::make_handle()),
        desc(detail::make_tn_desc()),
        a(detail::make_layout(kSize, kSize, kLd)),
        b(detail::make_layout(kSize, rows, kLd)),
        d(detail::make_layout(kSize, rows, kLd)) {
    const auto& l = weights.layers[0];
    const cublasLtEpilogue_t epilogue = relu ? CUBLASLT_EPILOGUE_RELU_BIAS : CUBLASLT_EPILOGUE_BIAS;
    SP_CUBLAS_CHECK(detail::lt().matmul_desc_set_attribute(desc.get(), CUBLASLT_MATMUL_DESC_EPILOGUE, &epilogue,
                                                   sizeof(epilogue)));
    const void* bias_ptr = bias.data();
    SP_CUBLAS_CHECK(detail::lt().matmul_desc_set_attribute(desc.get(), CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias_ptr,
                                                   sizeof(bias_ptr)));
    for (std::size_t r = 0; r < rows; ++r) want.push_back(layer_reference(l, x_host, r, relu));
  }

  [[nodiscard]] detail::GemmProblem problem() const {
    return {desc.get(), a.get(), b.get(), d.get(), w.data(), kSize, kSize, rows, relu};
  }

  // Runs `algo` on poisoned output; false when cuBLASLt refuses to launch it.
  bool run(const cublasLtMatmulAlgo_t& algo, std::vector<std::uint16_t>& out) {
    SP_CUDA_CHECK(cudaMemsetAsync(y.data(), 0xff, y.bytes(), stream.handle()));
    const float alpha = 1.0f, beta = 0.0f;
    const cublasStatus_t st =
        detail::lt().matmul(handle.get(), desc.get(), &alpha, w.data(), a.get(), x.data(), b.get(), &beta, y.data(), d.get(),
                       y.data(), d.get(), &algo, workspace.data(), workspace.bytes(), stream.handle());
    if (st != CUBLAS_STATUS_SUCCESS) {
      (void)cudaGetLastError();
      return false;
    }
    out.assign(y.size(), 0);
    SP_CUDA_CHECK(cudaMemcpyAsync(out.data(), y.data(), y.bytes(), cudaMemcpyDeviceToHost, stream.handle()));
    stream.synchronize();
    return true;
  }

  // Largest error / allowance over the rows (<= 1 passes).
  [[nodiscard]] double worst(const std::vector<std::uint16_t>& out) const {
    double worst_all = 0;
    for (std::size_t r = 0; r < rows; ++r) {
      std::vector<float> got(kSize);
      for (std::size_t o = 0; o < kSize; ++o) got[o] = from_bf16(out[r * kSize + o]);
      double e = 0;
      if (!mlp_output_matches(got, want[r], 0.03, &e)) e = std::max(e, 1.0 + 1e-9);
      worst_all = std::max(worst_all, e);
    }
    return worst_all;
  }

  DeviceBuffer<std::byte> workspace;
  detail::LtHandle handle;
  detail::MatmulDesc desc;
  detail::MatrixLayout a, b, d;
  std::vector<std::vector<float>> want;
};

TEST(GemmSearchGpu, EveryCandidateMatchesTheLayerReference) {
  SP_REQUIRE_GPU();
  for (const auto& [rows, relu] : {std::pair<std::size_t, bool>{1, true}, {5, false}}) {
    LayerSetup s(rows, relu);
    const auto built = detail::build_candidates(s.handle.get(), s.problem(), s.workspace.bytes());
    ASSERT_FALSE(built.empty()) << rows << " rows";
    // The search's reference is the heuristic's first fp32 answer, the one the batcher's
    // yardstick (MlpModel::GemmPlans::heuristic_first) runs.
    EXPECT_EQ(built.front().plan.heuristic_rank, 0);
    const auto first = detail::heuristic_first(s.handle.get(), s.problem(), s.workspace.bytes());
    ASSERT_TRUE(first.has_value());
    EXPECT_EQ(detail::read_config(*first), detail::read_config(built.front().algo));
    int ran = 0, split = 0;
    std::vector<std::uint16_t> out;
    for (const auto& c : built) {
      const auto cfg = detail::read_config(c.algo);
      EXPECT_LE(c.workspace_bytes, s.workspace.bytes());
      EXPECT_TRUE(detail::accumulates_in_fp32(cfg));
      if (!s.run(c.algo, out)) continue;
      ++ran;
      if (cfg.split_k > 1) ++split;
      EXPECT_LE(s.worst(out), 1.0) << rows << " rows, algo " << cfg.id << " tile " << detail::tile_name(cfg.tile)
                                   << " stages " << detail::stages_name(cfg.stages) << " split-K " << cfg.split_k;
    }
    EXPECT_GT(ran, 0);
    std::cout << rows << " rows: " << built.size() << " accepted, " << ran << " ran, " << split << " with split-K\n";
  }
}

TEST(GemmSearchGpu, SplitKCandidatesAtOneRowMatchTheReference) {
  SP_REQUIRE_GPU();
  LayerSetup s(1, true);
  const auto built = detail::build_candidates(s.handle.get(), s.problem(), s.workspace.bytes());
  int split = 0, refused = 0;
  std::vector<std::uint16_t> out;
  for (const auto& c : built) {
    const auto cfg = detail::read_config(c.algo);
    if (cfg.split_k <= 1) continue;
    if (!s.run(c.algo, out)) {  // the search skips these too
      ++refused;
      continue;
    }
    ++split;
    EXPECT_EQ(cfg.reduction, detail::kReductionComputeType);
    EXPECT_LE(s.worst(out), 1.0) << "algo " << cfg.id << " split-K " << cfg.split_k;
  }
  std::cout << split << " split-K configurations ran, " << refused << " refused to launch\n";
  if (split == 0) GTEST_SKIP() << "cuBLASLt runs no split-K configuration for 4096x4096 at 1 row on this GPU";
}

TEST(GemmSearchGpu, SearchChoosesAConfigurationThatMatchesTheReference) {
  SP_REQUIRE_GPU();
  for (const std::size_t rows : {1u, 17u}) {
    LayerSetup s(rows, true);
    const auto result = detail::search_gemm(s.device, s.handle.get(), s.problem(), s.workspace.bytes());
    const auto& c = result.choice;
    EXPECT_EQ(c.rows, rows);
    EXPECT_GT(c.us, 0.0);
    EXPECT_GT(c.tflops(), 0.0);
    EXPECT_GT(c.heuristic_us, 0.0);
    EXPECT_GE(c.candidates, 1);
    EXPECT_EQ(c.disagreed, 0);
    // The heuristic's first answer itself, or a candidate at least kGemmSearchMinGain faster
    // than it in the same rounds.
    if (c.us == c.heuristic_us) {
      EXPECT_DOUBLE_EQ(c.gain(), 1.0);
    } else {
      EXPECT_LE(c.us * (1.0 + kGemmSearchMinGain), c.heuristic_us);
      EXPECT_NE(c.heuristic_rank, 0);
    }
    std::vector<std::uint16_t> out;
    ASSERT_TRUE(s.run(result.algo, out));
    EXPECT_LE(s.worst(out), 1.0);
    std::cout << rows << " rows: algo " << c.algo_id << " tile " << c.tile << " stages " << c.stages << " split-K "
              << c.split_k << " option " << c.custom_option << " cluster " << c.cluster << " (heuristic rank "
              << c.heuristic_rank << "): " << c.us << " us (" << c.tflops() << " TFLOP/s), heuristic #0 "
              << c.heuristic_us << " us; " << c.candidates << " timed in " << c.search_ms << " ms\n";
  }
}

// The MLP of serve-bench's width, through a lane: sampled rows against the CPU reference.
TEST(GemmSearchGpu, Mlp4096MatchesReferenceAtOddRowCounts) {
  SP_REQUIRE_GPU();
  const Device device(0);
  const auto weights = make_mlp_weights({4096, 4096, 4096}, 13);
  MlpModel model(device, weights);
  Stream stream(device);
  auto lane = model.make_lane(stream.ref(), 256);
  DeviceBuffer<float> d_in(device, 256 * 4096), d_out(device, 256 * 4096);
  for (const std::size_t rows : {1u, 3u, 17u, 256u}) {
    lane->prepare(rows);
    const auto in = random_rows(rows * 4096, static_cast<std::uint32_t>(rows));
    std::vector<float> out(rows * 4096, std::numeric_limits<float>::quiet_NaN());
    SP_CUDA_CHECK(cudaMemcpyAsync(d_in.data(), in.data(), in.size() * sizeof(float), cudaMemcpyHostToDevice,
                                  stream.handle()));
    SP_CUDA_CHECK(cudaMemcpyAsync(d_out.data(), out.data(), out.size() * sizeof(float), cudaMemcpyHostToDevice,
                                  stream.handle()));
    lane->enqueue(d_in.data(), d_out.data(), rows);
    SP_CUDA_CHECK(cudaMemcpyAsync(out.data(), d_out.data(), out.size() * sizeof(float), cudaMemcpyDeviceToHost,
                                  stream.handle()));
    stream.synchronize();
    std::vector<std::size_t> check;
    if (rows <= 17)
      for (std::size_t r = 0; r < rows; ++r) check.push_back(r);
    else
      check = {0, 1, 17, 128, 254, 255};
    for (const std::size_t r : check) {
      std::vector<float> want(4096);
      mlp_reference(weights, std::span<const float>(in.data() + r * 4096, 4096), want);
      double worst = 0;
      EXPECT_TRUE(mlp_output_matches(std::span<const float>(out.data() + r * 4096, 4096), want, 0.03, &worst))
          << rows << " rows, row " << r << ": worst error / allowance " << worst;
    }
    const auto choices = model.gemm_choices(rows);
    ASSERT_EQ(choices.size(), 2u);
    EXPECT_TRUE(choices[0].relu);
    EXPECT_FALSE(choices[1].relu);
    for (const auto& c : choices) {
      EXPECT_EQ(c.rows, rows);
      EXPECT_GT(c.tflops(), 0.0);
      std::cout << rows << " rows, " << (c.relu ? "bias+ReLU" : "bias") << ": algo " << c.algo_id << " tile " << c.tile
                << " split-K " << c.split_k << ", " << c.us << " us, " << c.tflops() << " TFLOP/s (heuristic #0 "
                << c.heuristic_us << " us)\n";
    }
  }
  EXPECT_EQ(model.gemm_searches(), 8u);  // 4 row counts x 2 epilogues
  EXPECT_EQ(model.gemm_rows(), (std::vector<std::size_t>{1, 3, 17, 256}));
}

TEST(GemmSearchGpu, LayersOfOneShapeAndLanesShareOneSearch) {
  SP_REQUIRE_GPU();
  const Device device(0);
  const auto weights = make_mlp_weights({64, 64, 64, 64, 64}, 3);
  MlpModel model(device, weights);
  Stream s1(device), s2(device);
  auto lane1 = model.make_lane(s1.ref(), 8);
  auto lane2 = model.make_lane(s2.ref(), 8);
  EXPECT_TRUE(model.gemm_choices(8).empty());
  lane1->prepare(8);
  EXPECT_EQ(model.gemm_searches(), 2u);  // bias+ReLU (3 layers) and bias (the last)
  lane2->prepare(8);
  EXPECT_EQ(model.gemm_searches(), 2u);
  lane2->prepare(3);
  EXPECT_EQ(model.gemm_searches(), 4u);
  const auto choices = model.gemm_choices(8);
  ASSERT_EQ(choices.size(), 4u);
  EXPECT_EQ(choices[0].algo_id, choices[2].algo_id);
  EXPECT_EQ(choices[0].split_k, choices[2].split_k);
  EXPECT_DOUBLE_EQ(choices[0].us, choices[1].us);  // the same search result, not a re-timing
  EXPECT_FALSE(choices[3].relu);

  // The second lane runs the shared configuration correctly.
  const auto in = random_rows(8 * 64, 9);
  std::vector<float> out(8 * 64, std::numeric_limits<float>::quiet_NaN());
  DeviceBuffer<float> d_in(device, in.size()), d_out(device, out.size());
  SP_CUDA_CHECK(cudaMemcpy(d_in.data(), in.data(), d_in.bytes(), cudaMemcpyHostToDevice));
  SP_CUDA_CHECK(cudaMemcpy(d_out.data(), out.data(), d_out.bytes(), cudaMemcpyHostToDevice));
  lane2->enqueue(d_in.data(), d_out.data(), 8);
  s2.synchronize();
  SP_CUDA_CHECK(cudaMemcpy(out.data(), d_out.data(), d_out.bytes(), cudaMemcpyDeviceToHost));
  for (std::size_t r = 0; r < 8; ++r) {
    std::vector<float> want(64);
    mlp_reference(weights, std::span<const float>(in.data() + r * 64, 64), want);
    EXPECT_TRUE(mlp_output_matches(std::span<const float>(out.data() + r * 64, 64), want)) << "row " << r;
  }
}

// prepare() inside a capture: the search runs on its own stream and the capture survives,
// in thread-local and in global capture mode.
TEST(GemmSearchGpu, PrepareWhileTheLanesStreamIsCaptured) {
  SP_REQUIRE_GPU();
  const Device device(0);
  const auto weights = make_mlp_weights({512, 1024, 256}, 17);
  constexpr std::size_t kRows = 7;
  for (const CaptureMode mode : {CaptureMode::thread_local_, CaptureMode::global}) {
    MlpModel model(device, weights);
    Stream stream(device);
    auto lane = model.make_lane(stream.ref(), kRows);
    const auto in = random_rows(kRows * 512, 4);
    std::vector<float> out(kRows * 256, std::numeric_limits<float>::quiet_NaN());
    DeviceBuffer<float> d_in(device, in.size()), d_out(device, out.size());
    SP_CUDA_CHECK(cudaMemcpy(d_in.data(), in.data(), d_in.bytes(), cudaMemcpyHostToDevice));
    SP_CUDA_CHECK(cudaMemcpy(d_out.data(), out.data(), d_out.bytes(), cudaMemcpyHostToDevice));
    Graph graph;
    {
      GraphCapture capture(stream.ref(), mode);
      lane->prepare(kRows);
      lane->enqueue(d_in.data(), d_out.data(), kRows);
      graph = capture.end();
    }
    EXPECT_EQ(model.gemm_searches(), 2u);
    GraphExec exec(graph);
    exec.launch(stream.ref());
    stream.synchronize();
    SP_CUDA_CHECK(cudaMemcpy(out.data(), d_out.data(), d_out.bytes(), cudaMemcpyDeviceToHost));
    for (std::size_t r = 0; r < kRows; ++r) {
      std::vector<float> want(256);
      mlp_reference(weights, std::span<const float>(in.data() + r * 512, 512), want);
      EXPECT_TRUE(mlp_output_matches(std::span<const float>(out.data() + r * 256, 256), want)) << "row " << r;
    }
  }
}

}  // namespace
}  // namespace streampipe::serving
