// SPDX-License-Identifier: Apache-2.0
// The MLP's GEMM algorithm search on the GPU: every candidate it would time (split-K
// variants and smaller tiles included) computes the layer's CPU reference; the searched
// MLP of 4096-wide layers matches the reference at 1, 3, 17 and 256 rows; layers of one
// shape share one search; prepare() works while the lane's stream is being captured.
// Outputs are poisoned (NaN) before every run; inputs are random.

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
    SP_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(desc.get(), CUBLASLT_MATMUL_DESC_EPILOGUE, &epilogue,
                                                   sizeof(epilogue)));
    const void* bias_ptr = bias.data();
    SP_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(desc.get(), CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias_ptr,
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
        cublasLtMatmul(handle.get(), desc.get(), &alpha, w.data(), a.get(), x.data(), b.get(), &beta, y.data(), d.get(),
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

// With the bias pointer given, the search also times the sm_90a kernel on a Hopper GPU
// (and only there); whichever kernel it picks computes the layer's reference.
TEST(GemmSearchGpu, AlsoTimesTheSm90KernelWhereItRuns) {
  SP_REQUIRE_GPU();
  LayerSetup s(64, true);
  const auto plain = detail::search_gemm(s.device, s.handle.get(), s.problem(), s.workspace.bytes());
  auto with_bias = s.problem();
  with_bias.bias = s.bias.data();
  const auto both = detail::search_gemm(s.device, s.handle.get(), with_bias, s.workspace.bytes());
  const bool hopper = detail::sm90_gemm_unsupported(s.device, {4096, 4096, 64, true}).empty();
  EXPECT_EQ(both.choice.timed > plain.choice.timed, hopper);
  EXPECT_FALSE(plain.sm90.has_value());
  std::cout << "[ search   ] 64 rows: " << both.choice.kernel << ", " << both.choice.us << " us (cuBLASLt alone "
            << plain.choice.us << " us)\n";
  if (!both.sm90) {
    EXPECT_EQ(both.choice.kernel, "cuBLASLt");
    return;
  }
  EXPECT_EQ(both.choice.kernel, "sm90");
  detail::Sm90Workspace workspace(s.stream.ref(), 4096);
  const detail::Sm90Gemm gemm(s.device, {4096, 4096, 64, true}, *both.sm90, s.w.data(), s.bias.data(), s.x.data(),
                              s.y.data(), workspace.ref());
  SP_CUDA_CHECK(cudaMemsetAsync(s.y.data(), 0xff, s.y.bytes(), s.stream.handle()));
  gemm.enqueue(s.stream.ref());
  std::vector<std::uint16_t> out(s.y.size());
  SP_CUDA_CHECK(cudaMemcpyAsync(out.data(), s.y.data(), s.y.bytes(), cudaMemcpyDeviceToHost, s.stream.handle()));
  s.stream.synchronize();
  EXPECT_LE(s.worst(out), 1.0);
}

TEST(GemmSearchGpu, EveryCandidateMatchesTheLayerReference) {
  SP_REQUIRE_GPU();
  for (const auto& [rows, relu] : {std::pair<std::size_t, bool>{1, true}, {5, false}}) {
    LayerSetup s(rows, relu);
    std::size_t planned = 0;
    const auto built = detail::build_candidates(s.handle.get(), s.problem(), s.workspace.bytes(), {}, &planned);
    ASSERT_FALSE(built.empty()) << rows << " rows";
    EXPECT_LE(built.size(), planned);
    EXPECT_LE(planned, detail::CandidateLimits{}.max_candidates);
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
    std::cout << rows << " rows: " << planned << " planned, " << built.size() << " accepted, " << ran << " ran, "
              << split << " with split-K\n";
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
    EXPECT_GT(c.tflops, 0.0);
    EXPECT_GT(c.heuristic_us, 0.0);
    EXPECT_GE(c.timed, 1);
    EXPECT_LE(c.timed, c.planned);
    EXPECT_EQ(c.disagreed, 0);
    // The chosen configuration is no slower than the heuristic's first answer (the same
    // rounds time both; allow the rounds' noise).
    EXPECT_LE(c.us, c.heuristic_us * 1.10);
    std::vector<std::uint16_t> out;
    ASSERT_TRUE(s.run(result.algo, out));
    EXPECT_LE(s.worst(out), 1.0);
    std::cout << rows << " rows: algo " << c.algo_id << " tile " << c.tile << " stages " << c.stages << " split-K "
              << c.split_k << ": " << c.us << " us (" << c.tflops << " TFLOP/s), heuristic #0 " << c.heuristic_us
              << " us; " << c.timed << "/" << c.planned << " timed in " << c.search_ms << " ms\n";
  }
}

// The MLP of serve-bench's width, through a lane: sampled rows against the CPU reference.
TEST(GemmSearchGpu, Mlp4096MatchesReferenceAtOddRowCounts) {
  SP_REQUIRE_GPU();
  const Device device(0);
  const auto weights = make_mlp_weights({4096, 4096, 4096}, 13);
  MlpModel model(device, weights);
  Stream stream(device);
  auto lane = model.make_lane(stream.ref(), 256, 1);
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
      EXPECT_GT(c.tflops, 0.0);
      std::cout << rows << " rows, " << (c.relu ? "bias+ReLU" : "bias") << ": algo " << c.algo_id << " tile " << c.tile
                << " split-K " << c.split_k << ", " << c.us << " us, " << c.tflops << " TFLOP/s (heuristic #0 "
                << c.heuristic_us << " us)\n";
    }
  }
  EXPECT_EQ(model.gemm_searches(), 8u);  // 4 row counts x 2 epilogues
  EXPECT_EQ(model.gemm_plans(), (std::vector<std::pair<std::size_t, std::size_t>>{{1, 1}, {3, 1}, {17, 1}, {256, 1}}));
}

TEST(GemmSearchGpu, LayersOfOneShapeAndLanesShareOneSearch) {
  SP_REQUIRE_GPU();
  const Device device(0);
  const auto weights = make_mlp_weights({64, 64, 64, 64, 64}, 3);
  MlpModel model(device, weights);
  Stream s1(device), s2(device);
  auto lane1 = model.make_lane(s1.ref(), 8, 1);
  auto lane2 = model.make_lane(s2.ref(), 8, 1);
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
  // Two lanes: the busy timing's own streams and events are made inside the capture too.
  for (const std::size_t lanes : {1u, 2u}) {
    for (const CaptureMode mode : {CaptureMode::thread_local_, CaptureMode::global}) {
      MlpModel model(device, weights);
      Stream stream(device);
      auto lane = model.make_lane(stream.ref(), kRows, lanes);
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
        EXPECT_TRUE(mlp_output_matches(std::span<const float>(out.data() + r * 256, 256), want))
            << lanes << " lanes, row " << r;
      }
    }
  }
}

// Lanes made for two lanes search again, for the time per GEMM with both busy, and run
// what they chose correctly; the busy chain timing runs both lanes at once.
TEST(GemmSearchGpu, LanesMadeForTwoLanesChooseForThroughputUnderLoad) {
  SP_REQUIRE_GPU();
  const Device device(0);
  const auto weights = make_mlp_weights({1024, 1024, 1024}, 21);
  constexpr std::size_t kRows = 64;
  MlpModel model(device, weights);
  Stream s1(device), s2(device);
  auto alone = model.make_lane(s1.ref(), kRows, 1);
  auto busy = model.make_lane(s2.ref(), kRows, 2);
  alone->prepare(kRows);
  EXPECT_EQ(model.gemm_searches(), 2u);
  busy->prepare(kRows);
  EXPECT_EQ(model.gemm_searches(), 4u);  // not shared with the one-lane search
  EXPECT_EQ(model.gemm_plans(), (std::vector<std::pair<std::size_t, std::size_t>>{{kRows, 1}, {kRows, 2}}));
  for (const auto& c : model.gemm_choices(kRows, 1)) {
    EXPECT_EQ(c.lanes, 1);
    EXPECT_EQ(c.busy_us, 0.0);
    EXPECT_GT(c.us, 0.0);
  }
  for (const auto& c : model.gemm_choices(kRows, 2)) {
    EXPECT_EQ(c.lanes, 2);
    EXPECT_GT(c.busy_us, 0.0);
    EXPECT_GT(c.us, 0.0);
    EXPECT_GT(c.heuristic_us, 0.0);
    EXPECT_NEAR(c.tflops, c.flops() / (c.busy_us * 1e-6) / 1e12, 1e-6 * c.tflops);
    std::cout << "2 lanes, " << (c.relu ? "bias+ReLU" : "bias") << ": " << c.kernel << " " << c.tile << ", alone "
              << c.us << " us, busy " << c.busy_us << " us per GEMM (heuristic #0 " << c.heuristic_us << ")\n";
  }

  const auto in = random_rows(kRows * 1024, 5);
  std::vector<float> out(kRows * 1024, std::numeric_limits<float>::quiet_NaN());
  DeviceBuffer<float> d_in(device, in.size()), d_out(device, out.size());
  SP_CUDA_CHECK(cudaMemcpy(d_in.data(), in.data(), d_in.bytes(), cudaMemcpyHostToDevice));
  SP_CUDA_CHECK(cudaMemcpy(d_out.data(), out.data(), d_out.bytes(), cudaMemcpyHostToDevice));
  busy->enqueue(d_in.data(), d_out.data(), kRows);
  s2.synchronize();
  SP_CUDA_CHECK(cudaMemcpy(out.data(), d_out.data(), d_out.bytes(), cudaMemcpyDeviceToHost));
  for (const std::size_t r : {0u, 1u, 31u, 63u}) {
    std::vector<float> want(1024);
    mlp_reference(weights, std::span<const float>(in.data() + r * 1024, 1024), want);
    EXPECT_TRUE(mlp_output_matches(std::span<const float>(out.data() + r * 1024, 1024), want)) << "row " << r;
  }

  const std::vector<StreamRef> streams{s1.ref(), s2.ref()};
  const auto us = model.time_layers_busy(streams, kRows, 3);
  ASSERT_EQ(us.size(), 3u);
  for (const double u : us) EXPECT_GT(u, 0.0);
  EXPECT_THROW((void)model.time_layers_busy({}, kRows, 1), std::invalid_argument);
  EXPECT_THROW((void)model.make_lane(s1.ref(), kRows, 0), std::invalid_argument);
}

}  // namespace
}  // namespace streampipe::serving
