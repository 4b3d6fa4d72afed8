// SPDX-License-Identifier: Apache-2.0
#include "serve_bench_gemm.hpp"

#if defined(STREAMPIPE_HAVE_CUBLAS)
#include "streampipe/serving/mlp_reference.hpp"
#include "streampipe/cuda/device_buffer.hpp"
#include "streampipe/cuda/error.hpp"
#include "streampipe/cuda/event.hpp"
#include "streampipe/cuda/graph.hpp"
#include "streampipe/cuda/pinned_buffer.hpp"
#include "streampipe/report/table.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <vector>

namespace streampipe::cli::serve {

MlpRate measure_mlp_rate(const Device& device, serving::MlpModel& model, const InputPool& pool, std::size_t rows,
                         std::size_t lanes, int runs) {
  const CurrentDeviceGuard guard(device);
  const std::size_t in = model.input_size(), out = model.output_size();
  Stream stream(device);
  auto lane = model.make_lane(stream.ref(), rows, 1);
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
  Event start(device), stop(device);
  std::vector<double> tflops;
  constexpr int kPerRun = 10;  // a forward pass can be ~50 us: several per run smooth the event resolution
  const double flops = model.flops_per_row() * static_cast<double>(rows) * kPerRun;
  for (int r = 0; r < std::max(5, runs); ++r) {
    start.record(stream.ref());
    for (int i = 0; i < kPerRun; ++i) pass.launch(stream.ref());
    stop.record(stream.ref());
    stop.synchronize();
    tflops.push_back(flops / (elapsed(start, stop).count() * 1e-3) / 1e12);
  }
  SP_CUDA_CHECK(cudaMemcpyAsync(h_out.data(), d_out.data(), h_out.bytes(), cudaMemcpyDeviceToHost, stream.handle()));
  stream.synchronize();
  MlpRate rate;
  rate.rows = rows;
  rate.tflops = report::summarize(tflops);
  std::vector<double> gemm_tflops;
  for (const double us : model.time_layers(stream.ref(), rows, std::max(5, runs)))
    gemm_tflops.push_back(model.flops_per_row() * static_cast<double>(rows) / (us * 1e-6) / 1e12);
  rate.gemm_tflops = report::summarize(gemm_tflops);
  rate.lanes = std::max<std::size_t>(lanes, 1);
  std::vector<Stream> busy_streams;
  std::vector<StreamRef> busy_refs;
  for (std::size_t l = 0; l < rate.lanes; ++l) busy_refs.push_back(busy_streams.emplace_back(device).ref());
  const auto busy_rate = [&](std::size_t plan_lanes) {
    std::vector<double> tflops_per_run;
    for (const double us : model.time_layers_busy(busy_refs, rows, std::max(5, runs), plan_lanes))
      tflops_per_run.push_back(model.flops_per_row() * static_cast<double>(rows) / (us * 1e-6) / 1e12);
    return report::summarize(tflops_per_run);
  };
  rate.busy_gemm_tflops = busy_rate(rate.lanes);
  rate.busy_alone_plan_tflops = busy_rate(1);
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

double pct(double tflops, double peak) { return peak > 0 ? 100.0 * tflops / peak : 0.0; }

// The time the search minimized: alone, or per GEMM with the lanes busy.
double chosen_us(const serving::GemmChoice& c) { return c.lanes > 1 ? c.busy_us : c.us; }

// The least memory traffic of a GEMM (A, B and D once), as GB/s: the yardstick of small
// batches, which stream the weights and are bound by HBM bandwidth.
double gbps(const serving::GemmChoice& c) {
  const double bytes = 2.0 * static_cast<double>(c.in * c.out + c.in * c.rows + c.out * c.rows);
  return c.us > 0 ? bytes / (c.us * 1e-6) / 1e9 : 0.0;
}

}  // namespace

std::string gemm_choice_table(const serving::MlpModel& model, double peak_tflops) {
  report::Table t({"batch", "lanes", "layers", "in -> out", "epilogue", "algo", "tile", "stages", "opt", "cluster",
                   "split-K", "us alone", "us busy", "TFLOP/s", "% of peak", "GB/s", "heuristic #0 us", "gain",
                   "sm90 us", "timed"});
  for (const auto& [rows, lanes] : model.gemm_plans()) {
    const auto choices = model.gemm_choices(rows, lanes);
    for (const auto& g : group_layers(choices)) {
      const auto& c = *g.choice;
      const std::string layers = g.first == g.last ? std::to_string(g.first) : fmt::format("{}-{}", g.first, g.last);
      t.add_row({std::to_string(rows), std::to_string(lanes), layers, fmt::format("{} -> {}", c.in, c.out),
                 c.relu ? "bias+ReLU" : "bias", c.kernel == "cuBLASLt" ? std::to_string(c.algo_id) : c.kernel, c.tile,
                 c.stages, c.kernel == "cuBLASLt" ? std::to_string(c.custom_option) : "-", c.cluster,
                 c.split_k > 1 ? fmt::format("{} ({})", c.split_k, c.reduction) : "1", fmt::format("{:.1f}", c.us),
                 c.busy_us > 0 ? fmt::format("{:.1f}", c.busy_us) : "-", fmt::format("{:.1f}", c.tflops),
                 fmt::format("{:.0f}%", pct(c.tflops, peak_tflops)),
                 fmt::format("{:.0f}", gbps(c)), fmt::format("{:.1f}", c.heuristic_us),
                 fmt::format("{:.2f}x", chosen_us(c) > 0 ? c.heuristic_us / chosen_us(c) : 0.0),
                 c.sm90_us > 0 ? fmt::format("{:.1f}", c.sm90_us) : "-", fmt::format("{}/{}", c.timed, c.planned)});
    }
  }
  return t.str(fmt::format("GEMM configurations chosen by the algorithm search (events around each GEMM, L2 "
                           "flushed, median of 3 rounds of 10, pseudo-random bf16) against the bf16 peak {:.1f} "
                           "TFLOP/s; with 1 lane the fastest alone, with more the least time per GEMM with that many "
                           "lanes busy ('us busy': 4 GEMMs per lane on rotating weight copies, all lanes at once; "
                           "TFLOP/s, % of peak and the heuristic's time are by that time); GB/s counts A, B and D "
                           "once, alone; 'gain' is over the heuristic's first answer; "
                           "'opt' is cuBLASLt's custom option (a kernel variant); 'timed' counts candidates "
                           "accepted / planned; algo 'sm90' is streampipe's Hopper kernel, its split-K reduced in "
                           "cluster shared memory (smem) and a workspace (ws), its tile 'x2' cut into 2 row tiles; "
                           "'sm90 us' is that kernel's best time, chosen or not",
                           peak_tflops));
}

nlohmann::json gemm_choices_json(const serving::MlpModel& model, double peak_tflops) {
  nlohmann::json layers = nlohmann::json::array();
  for (const auto& [rows, lanes] : model.gemm_plans()) {
    const auto choices = model.gemm_choices(rows, lanes);
    for (const auto& g : group_layers(choices)) {
      const auto& c = *g.choice;
    layers.push_back({{"layers", {g.first, g.last}},
                      {"lanes", lanes},
                      {"in", c.in},
                      {"out", c.out},
                      {"rows", c.rows},
                      {"epilogue", c.relu ? "relu_bias" : "bias"},
                      {"kernel", c.kernel},
                      {"algo_id", c.algo_id},
                      {"tile", c.tile},
                      {"stages", c.stages},
                      {"custom_option", c.custom_option},
                      {"cluster", c.cluster},
                      {"split_k", c.split_k},
                      {"reduction", c.reduction},
                      {"workspace_bytes", c.workspace_bytes},
                      {"heuristic_rank", c.heuristic_rank},
                      {"us", c.us},
                      {"busy_us", c.busy_us},
                      {"tflops", c.tflops},
                      {"pct_of_peak", pct(c.tflops, peak_tflops)},
                      {"gb_per_s", gbps(c)},
                      {"heuristic_first_us", c.heuristic_us},
                      {"sm90_us", c.sm90_us},
                      {"sm90_config", c.sm90_config},
                      {"candidates_planned", c.planned},
                      {"candidates_timed", c.timed},
                      {"candidates_disagreed", c.disagreed},
                      {"search_ms", c.search_ms}});
    }
  }
  return layers;
}

}  // namespace streampipe::cli::serve
#endif
