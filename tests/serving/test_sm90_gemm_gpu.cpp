// SPDX-License-Identifier: Apache-2.0
// The Hopper (sm_90a) GEMM of the MLP's layers against the host reference: every tile
// height (64, 128, 256 batch rows), row counts that leave a tile partly empty, both
// epilogues, a shape whose K is split 8 ways, batches cut into 2 and 4 row tiles, a launch
// captured in a graph and replayed, and rows past `rows` left untouched. Outputs are poisoned (NaN) before every run. On a
// GPU other than compute capability 9.0 the kernel is refused with a reason (tested) and
// the rest is skipped.

#include "sm90_gemm.hpp"

#include "gemm_test_support.hpp"
#include "streampipe/serving/mlp_reference.hpp"
#include "streampipe/cuda/device_buffer.hpp"
#include "streampipe/cuda/error.hpp"
#include "streampipe/cuda/graph.hpp"
#include "streampipe/cuda/stream.hpp"
#include "support/gpu.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <iostream>
#include <map>
#include <tuple>
#include <vector>

namespace streampipe::serving {
namespace {

using test_support::layer_reference;

constexpr std::uint16_t kPoison = 0xFFFF;  // a bf16 NaN

bool is_sm90(const Device& d) { return d.properties().major == 9 && d.properties().minor == 0; }

struct Sm90Setup : test_support::LayerOnDevice {
  Sm90Setup(std::size_t in, std::size_t out, std::size_t rows_, bool relu_, std::size_t spare_rows = 0)
      : LayerOnDevice(in, out, rows_, relu_, 41, 11, spare_rows), workspace(stream.ref(), out) {}

  [[nodiscard]] detail::Sm90GemmShape shape() const {
    return {weights.layers[0].in, weights.layers[0].out, rows, relu};
  }

  [[nodiscard]] detail::Sm90Gemm gemm(const detail::Sm90Split& split) const {
    return detail::Sm90Gemm(device, shape(), split, w.data(), bias.data(), x.data(), y.data(), workspace.ref());
  }
  [[nodiscard]] detail::Sm90Gemm gemm() const { return gemm(detail::sm90_gemm_default_split(device, shape())); }

  std::vector<std::uint16_t> poisoned_run(const detail::Sm90Gemm& gemm) {
    SP_CUDA_CHECK(cudaMemsetAsync(y.data(), 0xff, y.bytes(), stream.handle()));
    gemm.enqueue(stream.ref());
    return read_y();
  }

  std::vector<std::uint16_t> read_y() {
    std::vector<std::uint16_t> out(y.size());
    SP_CUDA_CHECK(cudaMemcpyAsync(out.data(), y.data(), y.bytes(), cudaMemcpyDeviceToHost, stream.handle()));
    stream.synchronize();
    return out;
  }

  // Checks the rows of a sample (the first, the last, and every 37th: the host reference
  // of all 256 rows of a 4096-wide layer takes seconds) against the reference, computed
  // once per row.
  void expect_matches(const std::vector<std::uint16_t>& out) const {
    const auto& l = weights.layers[0];
    for (std::size_t r = 0; r < rows; ++r) {
      if (r != 0 && r + 1 != rows && r % 37 != 0) continue;
      auto [it, fresh] = reference_rows.try_emplace(r);
      if (fresh) it->second = layer_reference(l, x_host, r, relu);
      const auto& want = it->second;
      std::vector<float> got(l.out);
      for (std::size_t o = 0; o < l.out; ++o) got[o] = from_bf16(out[r * l.out + o]);
      double worst = 0;
      EXPECT_TRUE(mlp_output_matches(got, want, 0.03, &worst))
          << l.in << " -> " << l.out << ", row " << r << " of " << rows << ", relu " << relu << ": worst " << worst;
    }
  }

  detail::Sm90Workspace workspace;
  mutable std::map<std::size_t, std::vector<float>> reference_rows;
};

#define SP_REQUIRE_SM90(device)                                                          \
  do {                                                                                   \
    if (!is_sm90(device)) GTEST_SKIP() << "the sm_90a GEMM runs on compute capability 9.0 only"; \
  } while (0)

TEST(Sm90GemmGpu, RefusedWithAReasonWhereItCannotRun) {
  SP_REQUIRE_GPU();
  const Device device(0);
  if (!is_sm90(device)) {
    EXPECT_NE(detail::sm90_gemm_unsupported(device, {4096, 4096, 64, true}).find("9.0"), std::string::npos);
    return;
  }
  EXPECT_EQ(detail::sm90_gemm_unsupported(device, {4096, 4096, 256, true}), "");
  EXPECT_NE(detail::sm90_gemm_unsupported(device, {4096, 4096, 257, true}), "");
  EXPECT_NE(detail::sm90_gemm_unsupported(device, {4096, 4096, 0, true}), "");
  EXPECT_NE(detail::sm90_gemm_unsupported(device, {4096, 4000, 16, true}), "");  // not a multiple of 128
  EXPECT_NE(detail::sm90_gemm_unsupported(device, {4000, 4096, 16, true}), "");  // not a multiple of 64
  DeviceBuffer<std::uint16_t> buf(device, 4096);
  const detail::Sm90Workspace none;
  EXPECT_THROW(detail::Sm90Gemm(device, {4096, 4000, 16, true}, {}, buf.data(), buf.data(), buf.data(), buf.data(),
                                none.ref()),
               std::invalid_argument);
  // A split with groups > 1 needs the workspace.
  const detail::Sm90GemmShape shape{4096, 4096, 16, true};
  for (const auto& split : detail::sm90_gemm_splits(device, shape)) {
    if (split.groups > 1) {
      EXPECT_THROW(detail::Sm90Gemm(device, shape, split, buf.data(), buf.data(), buf.data(), buf.data(), none.ref()),
                   std::invalid_argument);
    }
  }
}

TEST(Sm90GemmGpu, MatchesTheLayerReferenceAtEveryTileHeight) {
  SP_REQUIRE_GPU();
  SP_REQUIRE_SM90(Device(0));
  for (const auto& [rows, relu] : {std::pair<std::size_t, bool>{1, true}, {64, false}, {100, true}, {128, true},
                                   {200, false}, {256, true}}) {
    Sm90Setup s(4096, 4096, rows, relu);
    const auto gemm = s.gemm();
    EXPECT_EQ(gemm.tile_rows(), rows <= 64 ? 64 : rows <= 128 ? 128 : 256);
    s.expect_matches(s.poisoned_run(gemm));
    std::cout << "[ sm90     ] 4096 -> 4096 at " << rows << " rows: " << gemm.describe() << "\n";
  }
}

TEST(Sm90GemmGpu, EverySplitMatchesTheReference) {
  SP_REQUIRE_GPU();
  SP_REQUIRE_SM90(Device(0));
  // 512 outputs are 4 tiles of 128: every cluster size and group count up to 8 CTAs a tile.
  for (const auto& [in, out, rows] : {std::tuple<std::size_t, std::size_t, std::size_t>{1024, 512, 33},
                                      {4096, 4096, 200}}) {
    Sm90Setup s(in, out, rows, true);
    const auto splits = detail::sm90_gemm_splits(s.device, s.shape());
    EXPECT_GE(splits.size(), 6u);
    std::map<int, int> row_tiles;  // tile height -> row tiles
    for (const auto& split : splits) row_tiles[split.tile_rows] = split.row_tiles;
    // 33 rows: one 64-row tile; 200 rows: one of 256, two of 128 (the second partly
    // empty), four of 64 (the last holding 8 rows).
    EXPECT_EQ(row_tiles, (rows == 33 ? std::map<int, int>{{64, 1}} : std::map<int, int>{{64, 4}, {128, 2}, {256, 1}}));
    for (const auto& split : splits) {
      SCOPED_TRACE(::testing::Message() << in << " -> " << out << ", split " << split.cluster << "x" << split.groups
                                        << " of " << split.tile_rows << "-row tiles");
      const auto gemm = s.gemm(split);
      s.expect_matches(s.poisoned_run(gemm));
      s.expect_matches(s.poisoned_run(gemm));  // the arrival counters were left at zero
    }
  }
}

TEST(Sm90GemmGpu, LeavesRowsPastTheBatchUntouched) {
  SP_REQUIRE_GPU();
  SP_REQUIRE_SM90(Device(0));
  // A 128-row tile, 58 of its rows empty; or two of 64, the second holding 6 rows.
  Sm90Setup s(2048, 1024, 70, false, 10);
  for (const auto& split : detail::sm90_gemm_splits(s.device, s.shape())) {
    SCOPED_TRACE(::testing::Message() << "split " << split.cluster << "x" << split.groups << " of "
                                      << split.tile_rows << "-row tiles");
    const auto out = s.poisoned_run(s.gemm(split));
    s.expect_matches(out);
    std::size_t touched = 0;
    for (std::size_t i = s.rows * 1024; i < out.size(); ++i) touched += out[i] != kPoison;
    EXPECT_EQ(touched, 0u);
  }
}

TEST(Sm90GemmGpu, ReplaysFromACapturedGraph) {
  SP_REQUIRE_GPU();
  SP_REQUIRE_SM90(Device(0));
  Sm90Setup s(4096, 4096, 16, true);
  const auto gemm = s.gemm();
  GraphCapture capture(s.stream.ref());
  gemm.enqueue(s.stream.ref());
  const GraphExec exec(capture.end());
  for (int i = 0; i < 3; ++i) {
    SP_CUDA_CHECK(cudaMemsetAsync(s.y.data(), 0xff, s.y.bytes(), s.stream.handle()));
    exec.launch(s.stream.ref());
    s.expect_matches(s.read_y());
  }
}

}  // namespace
}  // namespace streampipe::serving

