// SPDX-License-Identifier: Apache-2.0
#include "serve/mlp_rate.hpp"

#if defined(STREAMPIPE_HAVE_CUBLAS)
#include "streampipe/serving/mlp_reference.hpp"
#include "streampipe/cuda/device_buffer.hpp"
#include "streampipe/cuda/error.hpp"
#include "streampipe/cuda/graph.hpp"
#include "streampipe/cuda/pinned_buffer.hpp"
#include "streampipe/report/table.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <vector>

namespace streampipe::bench::serve {

MlpRate measure_mlp_rate(const Device& device, serving::MlpModel& model, const InputPool& pool, std::size_t rows,
                         int runs) {
  const CurrentDeviceGuard guard(device);
  const std::size_t in = model.input_size(), out = model.output_size();
  Stream stream(device);
  auto lane = model.make_lane(stream.ref(), rows);
  lane->prepare(rows);  // the model's algorithm search, unless another lane already ran it
  DeviceBuffer<float> d_in(device, rows * in), d_out(device, rows * out);
  PinnedBuffer<float> h_in(rows * in), h_out(rows * out);
  for (std::size_t i = 0; i < h_in.size(); ++i) h_in[i] = pool.rows[(i / in) % pool.rows.size()][i % in];
  std::fill(h_out.begin(), h_out.end(), std::numeric_limits<float>::quiet_NaN());
  SP_CUDA_CHECK(cudaMemcpyAsync(d_in.data(), h_in.data(), h_in.bytes(), cudaMemcpyHostToDevice, stream.handle()));
  SP_CUDA_CHECK(cudaMemcpyAsync(d_out.data(), h_out.data(), h_out.bytes(), cudaMemcpyHostToDevice, stream.handle()));
  // Replayed as a graph, as the batcher's per-bucket plans run it.
  GraphExec pass;
  {
    GraphCapture capture(stream.ref());
    lane->enqueue(d_in.data(), d_out.data(), rows);
    pass = GraphExec(capture.end());
  }
  for (int i = 0; i < 3; ++i) pass.launch(stream.ref());
  EventTimer timer(device);
  constexpr int kPerRun = 10;  // a forward pass can be ~50 us: several per run smooth the event resolution
  const double flops = model.flops_per_row() * static_cast<double>(rows) * kPerRun;
  const Samples forward = measure(0, std::max(5, runs), {{}, [&] {
    const double ms = timer.ms(stream.ref(), [&] {
      for (int i = 0; i < kPerRun; ++i) pass.launch(stream.ref());
    });
    return flops / (ms * 1e-3) / 1e12;
  }, {}});
  SP_CUDA_CHECK(cudaMemcpyAsync(h_out.data(), d_out.data(), h_out.bytes(), cudaMemcpyDeviceToHost, stream.handle()));
  stream.synchronize();
  MlpRate rate;
  rate.rows = rows;
  rate.forward_tflops = forward.values;
  rate.tflops = forward.summary();
  // The chain with the search's choices and with the heuristic's first answers, a run of
  // each in turn, so that a clock change favours neither.
  const auto to_tflops = [&](const std::vector<double>& us, std::vector<double>& tflops_per_pass) {
    for (const double u : us)
      tflops_per_pass.push_back(model.flops_per_row() * static_cast<double>(rows) / (u * 1e-6) / 1e12);
  };
  std::vector<double> searched, first;
  for (int r = 0; r < std::max(5, runs); ++r) {
    to_tflops(model.time_layers(stream.ref(), rows, 1), searched);
    to_tflops(model.time_layers(stream.ref(), rows, 1, serving::MlpModel::GemmPlans::heuristic_first), first);
  }
  rate.gemm_tflops = report::summarize(searched);
  rate.heuristic_gemm_tflops = report::summarize(first);
  rate.verified = true;
  for (std::size_t r = 0; r < rows; ++r) {
    double e = 0;
    const std::span<const float> got(h_out.data() + r * out, out);
    if (!serving::mlp_output_matches(got, pool.expected[r % pool.rows.size()], 0.03, &e)) rate.verified = false;
    rate.worst_error = std::max(rate.worst_error, e);
  }
  return rate;
}

namespace {

// Consecutive layers with the same problem share one search result.
struct LayerGroup {
  std::size_t first = 0, last = 0;
  const serving::GemmChoice* choice = nullptr;
};

std::vector<LayerGroup> group_layers(const std::vector<serving::GemmChoice>& gemms) {
  std::vector<LayerGroup> groups;
  for (std::size_t i = 0; i < gemms.size(); ++i) {
    const auto& c = gemms[i];
    if (!groups.empty()) {
      const auto& prev = *groups.back().choice;
      if (prev.in == c.in && prev.out == c.out && prev.relu == c.relu) {
        groups.back().last = i;
        continue;
      }
    }
    groups.push_back({i, i, &c});
  }
  return groups;
}

// The least memory traffic of a GEMM (A, B and D once), as GB/s: the yardstick of small
// batches, which stream the weights and are bound by HBM bandwidth.
double gbps(const serving::GemmChoice& c) {
  const double bytes = 2.0 * static_cast<double>(c.in * c.out + c.in * c.rows + c.out * c.rows);
  return c.us > 0 ? bytes / (c.us * 1e-6) / 1e9 : 0.0;
}

}  // namespace

std::string gemm_choice_table(const serving::MlpModel& model) {
  report::Table t({"batch", "layers", "in -> out", "epilogue", "algo", "tile", "stages", "opt", "cluster", "split-K",
                   "heuristic rank", "us", "TFLOP/s", "GB/s", "heuristic #0 us", "gain", "timed", "search ms"});
  double search_ms = 0;
  for (const std::size_t rows : model.gemm_rows()) {
    const auto choices = model.gemm_choices(rows);
    for (const auto& g : group_layers(choices)) {
      const auto& c = *g.choice;
      search_ms += c.search_ms;
      const std::string layers = g.first == g.last ? std::to_string(g.first) : fmt::format("{}-{}", g.first, g.last);
      t.add_row({std::to_string(rows), layers, fmt::format("{} -> {}", c.in, c.out), c.relu ? "bias+ReLU" : "bias",
                 std::to_string(c.algo_id), c.tile, c.stages, std::to_string(c.custom_option), c.cluster,
                 std::to_string(c.split_k), c.heuristic_rank >= 0 ? std::to_string(c.heuristic_rank) : "variant",
                 fmt::format("{:.1f}", c.us), fmt::format("{:.1f}", c.tflops()), fmt::format("{:.0f}", gbps(c)),
                 fmt::format("{:.1f}", c.heuristic_us), fmt::format("{:.2f}x", c.gain()),
                 std::to_string(c.candidates), fmt::format("{:.0f}", c.search_ms)});
    }
  }
  return t.str(fmt::format("GEMM configurations chosen by the algorithm search: each candidate alone (events around "
                           "each GEMM, L2 evicted before it, pseudo-random bf16, median of 3 interleaved rounds of 5); "
                           "the heuristic's first answer stays unless a candidate is at least {:.0f}% faster and "
                           "computes the same; 'heuristic rank' is the choice's place in the heuristic's answers "
                           "('variant': an answer unsplit, or another kernel option), 'opt' cuBLASLt's custom option "
                           "(a kernel variant), 'gain' the heuristic's first answer's time over the choice's; GB/s "
                           "counts A, B and D once; {} searches, {:.0f} ms in all",
                           100 * serving::kGemmSearchMinGain, model.gemm_searches(), search_ms));
}

nlohmann::json gemm_choices_json(const serving::MlpModel& model) {
  nlohmann::json layers = nlohmann::json::array();
  for (const std::size_t rows : model.gemm_rows()) {
    const auto choices = model.gemm_choices(rows);
    for (const auto& g : group_layers(choices)) {
      const auto& c = *g.choice;
      layers.push_back({{"layers", {g.first, g.last}},
                        {"in", c.in},
                        {"out", c.out},
                        {"rows", c.rows},
                        {"epilogue", c.relu ? "relu_bias" : "bias"},
                        {"algo_id", c.algo_id},
                        {"tile", c.tile},
                        {"stages", c.stages},
                        {"custom_option", c.custom_option},
                        {"cluster", c.cluster},
                        {"split_k", c.split_k},
                        {"workspace_bytes", c.workspace_bytes},
                        {"heuristic_rank", c.heuristic_rank},
                        {"us", c.us},
                        {"tflops", c.tflops()},
                        {"gb_per_s", gbps(c)},
                        {"heuristic_first_us", c.heuristic_us},
                        {"gain", c.gain()},
                        {"candidates_timed", c.candidates},
                        {"candidates_disagreed", c.disagreed},
                        {"search_ms", c.search_ms}});
    }
  }
  return layers;
}

}  // namespace streampipe::bench::serve
#endif
