// SPDX-License-Identifier: Apache-2.0
// `bench serve` (also `streampipe serve-bench`): a bf16 MLP on cuBLASLt served through the
// dynamic batcher to a closed-loop concurrency sweep (or an open-loop rate sweep), in three
// modes side by side: one request at a time (plain launches, one lane), dynamic batching with
// plain launches, and dynamic batching with a CUDA graph per bucket. The points' table, the
// issue's targets checked in the same run, on a GPU the model's compute alone and the GEMM
// configurations its search chose; outputs: the plot of throughput against p99 latency and
// every point's latency report.

#include "benchmarks.hpp"
#include "serve/config.hpp"
#include "serve/plot.hpp"
#include "serve/points.hpp"
#include "serve/summary.hpp"

#include "streampipe/cuda/device.hpp"
#include "streampipe/serving/mlp_reference.hpp"
#if defined(STREAMPIPE_HAVE_CUBLAS)
#include "streampipe/serving/mlp_model.hpp"
#endif

#include <fmt/format.h>

#include <future>
#include <random>

namespace streampipe::bench {
namespace {

using namespace streampipe::bench::serve;

// True for the GPU; prints why not when --backend auto finds none. Throws ParameterError for
// --backend gpu without a usable GPU (or cuBLASLt) and for a device that does not exist.
bool resolve_backend(const Config& c, const State& state) {
  bool gpu = false;
  if (c.backend == "host") return false;
  const auto reason = Device::unavailable_reason();
#if !defined(STREAMPIPE_HAVE_CUBLAS)
  if (c.backend == "gpu") throw ParameterError("--backend gpu: this build has no cuBLASLt");
#else
  if (!reason) {
    if (c.device >= Device::count())
      throw ParameterError(fmt::format("--device {}: there are {} GPUs", c.device, Device::count()));
    gpu = true;
  } else if (c.backend == "gpu") {
    throw ParameterError(fmt::format("--backend gpu: no usable GPU ({})", *reason));
  }
#endif
  if (!gpu)
    state.print(fmt::format("no usable GPU here ({}): running on the host backend (slowly).\n",
                            reason.value_or("no cuBLASLt")));
  return gpu;
}

// The weights, the inputs with their CPU references (computed in parallel before anything is
// timed) and, on a GPU, the model on its device.
void prepare(const Config& c, Setup& s) {
  if (s.gpu)
    for (const std::size_t size : c.sizes)
      if (size % 8 != 0)
        throw ParameterError(fmt::format(
            "--layers {}: {} is not a multiple of 8 (bf16 tensor-core GEMMs need 16-byte rows)", c.layers, size));
  s.weights = serving::make_mlp_weights(c.sizes, c.seed);
  const std::size_t in_size = s.weights.input_size(), out_size = s.weights.output_size();
  s.model_name = fmt::format("MLP {} (bf16, fp32 accumulate)", c.layers);
  std::mt19937 rng(static_cast<unsigned>(c.seed) + 1);
  std::uniform_real_distribution<float> value(-1.0f, 1.0f);
  for (int r = 0; r < c.pool_rows; ++r) {
    std::vector<float> row(in_size);
    for (auto& v : row) v = value(rng);
    s.pool.rows.push_back(std::move(row));
  }
  s.pool.expected.assign(s.pool.rows.size(), std::vector<float>(out_size));
  {
    std::vector<std::future<void>> jobs;
    for (std::size_t r = 0; r < s.pool.rows.size(); ++r)
      jobs.push_back(std::async(std::launch::async,
                                [&, r] { serving::mlp_reference(s.weights, s.pool.rows[r], s.pool.expected[r]); }));
    for (auto& j : jobs) j.get();
  }
  // Page-locked memory needs a GPU: on the host backend requests stay in ordinary memory.
  s.pinned_requests = s.gpu && c.request_memory == "pinned";
  if (s.pinned_requests) s.pool.pin();
#if defined(STREAMPIPE_HAVE_CUBLAS)
  if (s.gpu) {
    s.device = std::make_unique<Device>(c.device);
    s.device_name = s.device->name();
    s.model = std::make_unique<serving::MlpModel>(*s.device, s.weights);
  }
#endif
}

void run_serve(State& state) {
  Config c = read_config(state);
  Setup s;
  s.gpu = resolve_backend(c, state);
  // CUDA graphs need a GPU; a mode left out is said, or the table would look complete.
  if (!s.gpu && std::erase_if(c.modes, [](const ModeSpec& m) { return m.graphs; }) > 0)
    state.print("no GPU: the graphs mode (a CUDA graph per batch-size bucket) is left out; none and dynamic run on "
                "the host\n");
  prepare(c, s);
  if (s.gpu) state.set_device(c.device, s.device_name);

  Result& result = state.result();
  result.fields["model"] = {
      {"layers", c.sizes}, {"flops_per_request", s.weights.flops_per_row()}, {"seed", c.seed}};
  result.fields["config"] = {{"max_batch", c.max_batch},
                             {"preferred", c.preferred},
                             {"max_queue_delay_us", c.max_delay_us},
                             {"lanes", c.lanes},
                             {"queue", c.queue},
                             {"sync", c.sync},
                             {"client", c.open_loop() ? "open loop" : c.client},
                             {"io", c.io},
                             {"request_memory", s.pinned_requests ? "pinned" : "pageable"},
                             {"idle_spin_us", c.idle_spin_us},
                             {"window_ms", c.window_ms},
                             {"windows", c.runs},
                             {"reference_windows", c.runs * 4},
                             {"warmup_windows", c.warmup},
                             {"concurrency", c.concurrency},
                             {"open_loop_rates", c.rates}};
  state.print(fmt::format(
      "serve-bench: {} on {}; {}; requests in {} memory, {} I/O; {} ms windows, {} warm-up + {} measured "
      "per point ({} for the single-request reference)\n",
      s.model_name, s.device_name,
      c.open_loop() ? "open loop"
                    : (c.client_model() == ClientModel::sync ? "closed loop, a thread per client"
                                                             : "closed loop, async clients resubmitting from "
                                                               "completion callbacks"),
      s.pinned_requests ? "pinned" : "pageable", s.gpu ? c.io : "host", c.window_ms, c.warmup, c.runs, c.runs * 4));

  nlohmann::json report_runs = nlohmann::json::array();
  const std::vector<Point> points =
      serve_points(c, s, state.wants("report-json") ? &report_runs : nullptr, [&](const std::string& text) {
        state.print(text);
      });

  state.print("\n");
  state.add_table(points_table(c, s, points));
  result.fields["points"] = points_json(points);
  result.fields["targets"] = check_targets(c, s.gpu, points, [&](const std::string& text) { state.print(text); });

#if defined(STREAMPIPE_HAVE_CUBLAS)
  if (s.gpu) {
    state.print("\n");
    MlpRate at_max;
    state.add_table(mlp_rate_table(*s.device, *s.model, s.pool, c, at_max));
    state.print("\n" + gemm_choice_table(*s.model));
    result.fields["gemm_choices"] = gemm_choices_json(*s.model);
    if (at_max.rows > 0)
      state.print(fmt::format("the MLP's GEMMs at batch {}: {:.1f} TFLOP/s with the search's choices, {:.1f} with the "
                              "heuristic's first answers ({:.3f}x)\n",
                              at_max.rows, at_max.gemm_tflops.median, at_max.heuristic_gemm_tflops.median,
                              at_max.gain()));
  }
#endif

  if (state.wants("report-json")) result.outputs["report-json"] = report_runs.dump() + "\n";
  if (state.wants("svg")) {
    std::vector<PlotSeries> series;
    for (const auto& mode : c.modes) {
      PlotSeries line{mode.short_label, {}};
      for (const auto& p : points)
        if (p.mode == mode.key)
          line.points.push_back({p.latency.p99, p.qps.median, c.open_loop() ? static_cast<int>(p.rate) : p.clients});
      series.push_back(std::move(line));
    }
    result.outputs["svg"] = throughput_latency_svg(fmt::format("{} on {}", s.model_name, s.device_name), series);
  }
}

}  // namespace

Benchmark serve_benchmark() {
  Benchmark b;
  b.name = "serve";
  b.description =
      "Serve an MLP (cuBLASLt) through the dynamic batcher under a concurrency sweep: throughput and latency "
      "without batching, batched, and with CUDA graphs. See docs/batching.md.";
  b.mismatch = "some requests failed or did not match the CPU reference (see 'verified')";
  b.runs = 5;
  b.warmup = 2;
  b.parameters = serve::parameters();
  b.outputs = {{"report-json", "write every point's report with every query's timestamps to FILE"},
               {"svg", "write the throughput / p99 latency plot to FILE"}};
  b.run = run_serve;
  return b;
}

}  // namespace streampipe::bench
