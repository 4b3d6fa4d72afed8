// SPDX-License-Identifier: Apache-2.0
// `streampipe serve-bench` (also `streampipe bench serve`): a bf16 MLP on cuBLASLt served
// through the dynamic batcher to a closed-loop concurrency sweep, in three modes side by
// side: one request at a time (plain launches, one lane), dynamic batching with plain
// launches, and dynamic batching with a CUDA graph per bucket. Table, JSON, SVG plot of
// throughput against p99 latency, and the targets checked in the same run.

#include "commands.hpp"
#include "serve_bench_gemm.hpp"
#include "serve_bench_load.hpp"
#include "serve_bench_svg.hpp"

#include "streampipe/serving/batcher.hpp"
#include "streampipe/serving/host_executor.hpp"
#include "streampipe/serving/mlp_reference.hpp"
#include "streampipe/cuda/device.hpp"
#include "streampipe/report/atomic_file.hpp"
#include "streampipe/report/host_info.hpp"
#include "streampipe/report/latency_report.hpp"
#include "streampipe/report/statistics.hpp"
#include "streampipe/report/table.hpp"
#if defined(STREAMPIPE_HAVE_CUBLAS)
#include "streampipe/serving/gpu_executor.hpp"
#include "streampipe/serving/mlp_model.hpp"
#endif

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <future>
#include <memory>
#include <random>
#include <string>
#include <vector>

namespace streampipe::cli {
namespace {

using namespace streampipe::serving;

struct ServeOptions {
  std::string layers = "4096,4096,4096,4096,4096";
  std::vector<int> concurrency = {1, 2, 4, 8, 16, 32, 64, 128, 256};
  std::vector<double> rates;  // open loop instead of the concurrency sweep when given
  std::vector<std::string> modes = {"none", "dynamic", "graphs"};
  int max_batch = 256;
  std::vector<int> preferred;
  int max_delay_us = 0;
  int lanes = 2;
  int queue = 4096;
  std::string sync = "spin";
  std::string client = "async";
  std::string io = "mapped";
  std::string request_memory = "pinned";
  int idle_spin_us = 500;
  std::string backend = "auto";
  double window_ms = 200;
  int pool_rows = 16;
  std::uint64_t seed = 42;
  bool report = false;
  std::string report_json;
  std::string svg_path;
};

struct ModeSpec {
  std::string key, label, short_label;
  bool batching = false, graphs = false;
};

const ModeSpec kModes[] = {
    {"none", "no batching (1 at a time, plain launches)", "one at a time", false, false},
    {"dynamic", "dynamic batching, plain launches", "batching", true, false},
    {"graphs", "dynamic batching, CUDA graph per bucket", "batching + graphs", true, true},
};

std::vector<std::size_t> parse_layers(const std::string& text) {
  std::vector<std::size_t> sizes;
  std::size_t pos = 0;
  while (pos <= text.size()) {
    const std::size_t comma = std::min(text.find(',', pos), text.size());
    const std::string item = text.substr(pos, comma - pos);
    std::size_t used = 0;
    unsigned long v = 0;
    try {
      v = std::stoul(item, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (item.empty() || used != item.size() || v == 0 || v > (1u << 16))
      throw UsageError(fmt::format("--layers '{}': '{}' is not a size in [1, 65536]", text, item));
    sizes.push_back(v);
    pos = comma + 1;
  }
  if (sizes.size() < 2)
    throw UsageError(fmt::format("--layers '{}': give the input size and at least one layer's output size", text));
  return sizes;
}

std::string ms(double v) { return fmt::format("{:.3f}", v); }

struct PointResult {
  std::string mode;
  int clients = 0;     // closed loop
  double rate = 0;     // open loop: offered requests/s
  std::size_t dropped = 0, rejected = 0;  // open loop
  report::Summary qps, latency;
  report::LatencySummary server;
  serve::LoadResult load;
};

int run_serve_bench(const ServeOptions& so, const BenchOptions& bo) {
  const auto sizes = parse_layers(so.layers);
  for (const int c : so.concurrency)
    if (c < 1 || c > 4096) throw UsageError(fmt::format("--concurrency {}: must be in [1, 4096]", c));
  for (const double r : so.rates)
    if (!(r >= 1 && r <= 1e8)) throw UsageError(fmt::format("--rate {}: must be in [1, 1e8] requests/s", r));
  const bool open_loop = !so.rates.empty();
  if (so.sync != "spin" && so.sync != "blocking") throw UsageError(fmt::format("--sync '{}': spin or blocking", so.sync));
  if (so.client != "sync" && so.client != "async") throw UsageError(fmt::format("--client '{}': sync or async", so.client));
  const auto client_model = so.client == "async" ? serve::ClientModel::async : serve::ClientModel::sync;
  if (so.io != "copy" && so.io != "mapped") throw UsageError(fmt::format("--io '{}': copy or mapped", so.io));
  if (so.request_memory != "pinned" && so.request_memory != "pageable")
    throw UsageError(fmt::format("--request-memory '{}': pinned or pageable", so.request_memory));
  std::vector<ModeSpec> modes;
  for (const auto& m : so.modes) {
    const auto it = std::find_if(std::begin(kModes), std::end(kModes), [&](const ModeSpec& s) { return s.key == m; });
    if (it == std::end(kModes)) throw UsageError(fmt::format("--modes: unknown mode '{}' (none, dynamic, graphs)", m));
    modes.push_back(*it);
  }
  BatchPolicy policy;
  policy.max_batch_size = static_cast<std::size_t>(so.max_batch);
  for (const int p : so.preferred) policy.preferred_batch_sizes.push_back(static_cast<std::size_t>(p));
  policy.max_queue_delay = std::chrono::microseconds(so.max_delay_us);
  try {
    validate(policy);
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }
  const int max_clients = *std::max_element(so.concurrency.begin(), so.concurrency.end());
  if (!open_loop && so.queue < max_clients)
    throw UsageError(fmt::format("--queue {} is smaller than {} clients: closed-loop clients would be rejected",
                                 so.queue, max_clients));

  bool gpu = false;
  if (so.backend == "gpu" || so.backend == "auto") {
    const auto reason = Device::unavailable_reason();
#if !defined(STREAMPIPE_HAVE_CUBLAS)
    if (so.backend == "gpu") throw UsageError("--backend gpu: this build has no cuBLASLt");
#else
    if (!reason) {
      if (bo.device >= Device::count())
        throw UsageError(fmt::format("--device {}: there are {} GPUs", bo.device, Device::count()));
      gpu = true;
    } else if (so.backend == "gpu") {
      throw UsageError(fmt::format("--backend gpu: no usable GPU ({})", *reason));
    }
#endif
    if (!gpu) fmt::print("no usable GPU here ({}): running on the host backend (slowly).\n", reason.value_or("no cuBLASLt"));
  } else if (so.backend != "host") {
    throw UsageError(fmt::format("--backend '{}': auto, gpu or host", so.backend));
  }
  if (!gpu) std::erase_if(modes, [](const ModeSpec& m) { return m.graphs; });  // no graphs on the host

  if (gpu)
    for (const std::size_t size : sizes)
      if (size % 8 != 0)
        throw UsageError(fmt::format("--layers {}: {} is not a multiple of 8 (bf16 tensor-core GEMMs need 16-byte rows)",
                                     so.layers, size));
  const auto weights = make_mlp_weights(sizes, so.seed);
  const std::size_t in_size = weights.input_size(), out_size = weights.output_size();
  const std::string model_name = fmt::format("MLP {} (bf16, fp32 accumulate)", so.layers);

  // Inputs and their CPU references, computed in parallel before anything is timed.
  serve::InputPool pool;
  std::mt19937 rng(static_cast<unsigned>(so.seed) + 1);
  std::uniform_real_distribution<float> value(-1.0f, 1.0f);
  for (int r = 0; r < so.pool_rows; ++r) {
    std::vector<float> row(in_size);
    for (auto& v : row) v = value(rng);
    pool.rows.push_back(std::move(row));
  }
  pool.expected.assign(pool.rows.size(), std::vector<float>(out_size));
  {
    std::vector<std::future<void>> jobs;
    for (std::size_t r = 0; r < pool.rows.size(); ++r)
      jobs.push_back(std::async(std::launch::async, [&, r] { mlp_reference(weights, pool.rows[r], pool.expected[r]); }));
    for (auto& j : jobs) j.get();
  }
  // Page-locked memory needs a GPU: on the host backend requests stay in ordinary memory.
  const bool pinned_requests = gpu && so.request_memory == "pinned";
  if (pinned_requests) pool.pin();

  nlohmann::json out;
  out["benchmark"] = "serve";
  out["host"] = report::describe_host();
  out["model"] = {{"layers", sizes}, {"flops_per_request", weights.flops_per_row()}, {"seed", so.seed}};
  out["config"] = {{"max_batch", so.max_batch},   {"preferred", so.preferred}, {"max_queue_delay_us", so.max_delay_us},
                   {"lanes", so.lanes},           {"queue", so.queue},         {"sync", so.sync},
                   {"client", open_loop ? "open loop" : so.client}, {"io", so.io},
                   {"request_memory", pinned_requests ? "pinned" : "pageable"},
                   {"idle_spin_us", so.idle_spin_us},
                   {"window_ms", so.window_ms},   {"windows", bo.runs},        {"reference_windows", bo.runs * 4}, {"warmup_windows", bo.warmup},
                   {"concurrency", so.concurrency}, {"open_loop_rates", so.rates}};
  std::string device_name = "host";

#if defined(STREAMPIPE_HAVE_CUBLAS)
  std::unique_ptr<Device> device;
  std::unique_ptr<MlpModel> model;
  if (gpu) {
    device = std::make_unique<Device>(bo.device);
    device_name = device->name();
    model = std::make_unique<MlpModel>(*device, weights);
  }
#endif
  out["device"] = device_name;
  fmt::print("serve-bench: {} on {}; {}; requests in {} memory, {} I/O; {} ms windows, {} warm-up + {} measured "
             "per point ({} for the single-request reference)\n",
             model_name, device_name,
             open_loop ? "open loop"
                       : (client_model == serve::ClientModel::sync ? "closed loop, a thread per client"
                                                                   : "closed loop, async clients resubmitting from "
                                                                     "completion callbacks"),
             pinned_requests ? "pinned" : "pageable", gpu ? so.io : "host", so.window_ms, bo.warmup, bo.runs,
             bo.runs * 4);

  const report::SyncMode sync = so.sync == "blocking" ? report::SyncMode::blocking : report::SyncMode::spin;
  std::vector<PointResult> points;
  nlohmann::json report_runs = nlohmann::json::array();
  bool verification_failed = false;

  for (const auto& mode : modes) {
    std::unique_ptr<BatchExecutor> exec;
    const std::size_t lanes = mode.batching ? static_cast<std::size_t>(so.lanes) : 1;
#if defined(STREAMPIPE_HAVE_CUBLAS)
    if (gpu)
      exec = std::make_unique<GpuExecutor>(*device, *model,
                                           GpuExecutorOptions{lanes, mode.graphs, sync,
                                                              so.io == "mapped" ? BatchIo::mapped : BatchIo::copy});
#endif
    if (!exec)
      exec = std::make_unique<HostExecutor>(in_size, out_size, lanes,
                                            [&](std::span<const float> in, std::span<float> o, std::size_t rows) {
                                              for (std::size_t r = 0; r < rows; ++r)
                                                mlp_reference(weights, in.subspan(r * in_size, in_size),
                                                              o.subspan(r * out_size, out_size));
                                            });
    BatcherOptions o;
    o.policy = mode.batching ? policy : BatchPolicy{1, {}, std::chrono::microseconds(0)};
    o.max_queue_size = static_cast<std::size_t>(so.queue);
    o.record_queries = true;
    o.idle_spin = std::chrono::microseconds(so.idle_spin_us);
    DynamicBatcher batcher(*exec, o);  // prepares (captures) every bucket's plan: the warm-up of the plans
    const std::size_t loads = open_loop ? so.rates.size() : so.concurrency.size();
    for (std::size_t li = 0; li < loads; ++li) {
      serve::LoadOptions lo;
      lo.window_ms = so.window_ms;
      lo.warmup_windows = bo.warmup;
      lo.windows = bo.runs;
      lo.model = client_model;
      // The single-request reference (no batching, lowest load) bounds the batching target's
      // p99: 5 windows of one client hold ~700 requests, so their p99 rests on the 7 slowest
      // and one scheduling hiccup moves it 3x. Four times the windows: ~28 samples beyond it.
      if (!mode.batching && li == 0) lo.windows = bo.runs * 4;
      PointResult p;
      p.mode = mode.key;
      if (open_loop) {
        p.rate = so.rates[li];
        const std::size_t slots = static_cast<std::size_t>(so.queue) + lanes * o.policy.max_batch_size;
        auto r = serve::run_open_loop(batcher, pool, p.rate, slots, lo);
        p.load = std::move(r.load);
        p.dropped = r.dropped;
        p.rejected = r.rejected;
      } else {
        p.clients = so.concurrency[li];
        lo.clients = p.clients;
        p.load = serve::run_closed_loop(batcher, pool, lo);
      }
      const std::string load_label = open_loop ? fmt::format("{:.0f} req/s offered", p.rate)
                                               : fmt::format("{} clients", p.clients);
      p.qps = report::summarize(p.load.window_qps);
      p.latency = report::summarize(p.load.latency_ms);
      report::LatencyRun run;
      run.name = fmt::format("{} | {} | {}", model_name, mode.label, load_label);
      run.device = device_name;
      run.sync = exec->sync_mode();
      run.limits.warmup_ms = so.window_ms * bo.warmup;
      run.limits.duration_limit_ms = so.window_ms * static_cast<double>(lo.windows);
      run.wall_ms = so.window_ms * static_cast<double>(lo.windows);
      const double begin_ms = std::chrono::duration<double, std::milli>(p.load.measure_begin - batcher.origin()).count();
      const double end_ms = std::chrono::duration<double, std::milli>(p.load.measure_end - batcher.origin()).count();
      for (const auto& q : batcher.take_records())
        if (q.submit_ms >= begin_ms && q.complete_ms < end_ms) run.queries.push_back(q);
      p.server = report::summarize(run);
      if (so.report) fmt::print("{}", report::format_report(run, p.server));
      if (!so.report_json.empty()) report_runs.push_back(report::report_json(run, p.server));
      if (p.load.errors > 0 || p.load.mismatched > 0 || p.load.verified == 0) verification_failed = true;
      fmt::print("  {:<8} {:>20}: {:>10.0f} req/s, p50 {} ms, p99 {} ms, mean batch {:.1f}, verified {}/{}{}{}\n",
                 mode.key, load_label, p.qps.median, ms(p.latency.median), ms(p.latency.p99), p.server.mean_batch,
                 p.load.verified - p.load.mismatched, p.load.verified,
                 p.load.errors > 0 ? fmt::format(", {} errors: {}", p.load.errors, p.load.first_error) : "",
                 open_loop ? fmt::format(", {} rejected (queue full), {} dropped (client out of buffers)", p.rejected,
                                         p.dropped)
                           : "");
      points.push_back(std::move(p));
    }
    batcher.shutdown();
  }

  // The table.
  report::Table table({"mode", open_loop ? "offered/s" : "clients", "req/s", "min", "max", "p50 ms", "p90 ms", "p99 ms", "mean batch",
                       "enqueue us", "compute us", "verified"},
                      {report::Align::left, report::Align::right, report::Align::right, report::Align::right,
                       report::Align::right, report::Align::right, report::Align::right, report::Align::right,
                       report::Align::right, report::Align::right, report::Align::right, report::Align::right});
  for (const auto& p : points)
    table.add_row({p.mode, open_loop ? fmt::format("{:.0f}", p.rate) : std::to_string(p.clients), fmt::format("{:.0f}", p.qps.median), fmt::format("{:.0f}", p.qps.min),
                   fmt::format("{:.0f}", p.qps.max), ms(p.latency.median), ms(p.latency.p90), ms(p.latency.p99),
                   fmt::format("{:.1f}", p.server.mean_batch),
                   p.server.enqueue.count ? fmt::format("{:.1f}", p.server.enqueue.median * 1e3) : "-",
                   p.server.compute.count ? fmt::format("{:.1f}", p.server.compute.median * 1e3) : "-",
                   fmt::format("{}/{}", p.load.verified - p.load.mismatched, p.load.verified)});
  fmt::print("\n{}", table.str(fmt::format("{} on {}: {}, req/s = median of {} windows of {} ms (min, max); "
                                           "latency {}",
                                           model_name, device_name,
                                           open_loop ? fmt::format("open loop, {} requests", pinned_requests ? "pinned" : "pageable")
                                                     : fmt::format("closed loop ({} clients, {} requests)", so.client,
                                                                   pinned_requests ? "pinned" : "pageable"),
                                           bo.runs,
                                           so.window_ms,
                                           open_loop ? "from submit to completion in the batcher" : "as the clients see it")));

  nlohmann::json jpoints = nlohmann::json::array();
  for (const auto& p : points)
    jpoints.push_back({{"mode", p.mode},
                       {"clients", p.clients},
                       {"offered_rps", p.rate},
                       {"rejected_queue_full", p.rejected},
                       {"dropped_client_overload", p.dropped},
                       {"throughput_rps", p.qps},
                       {"latency_ms", p.latency},
                       {"server", p.server},
                       {"verified", p.load.verified},
                       {"mismatched", p.load.mismatched},
                       {"worst_error_ratio", p.load.worst_error},
                       {"errors", p.load.errors},
                       {"first_error", p.load.first_error}});
  out["points"] = jpoints;

  // The targets, from this run.
  nlohmann::json targets = nlohmann::json::object();
  const auto find = [&](const std::string& mode) {
    std::vector<const PointResult*> v;
    for (const auto& p : points)
      if (p.mode == mode) v.push_back(&p);
    return v;
  };
  const auto none = find("none"), best_batched = find(gpu ? "graphs" : "dynamic");
  if (!none.empty() && !best_batched.empty()) {
    const double single_p99 = none.front()->latency.p99;  // the lowest concurrency: low load
    double none_best = 0;
    for (const auto* p : none) none_best = std::max(none_best, p->qps.median);
    double batched_best = 0;
    int at_clients = 0;
    for (const auto* p : best_batched)
      if (p->latency.p99 <= 2 * single_p99 && p->qps.median > batched_best) {
        batched_best = p->qps.median;
        at_clients = open_loop ? static_cast<int>(p->rate) : p->clients;
      }
    const double speedup = none_best > 0 ? batched_best / none_best : 0;
    targets["batching_speedup"] = {{"value", speedup},
                                   {"target", 10.0},
                                   {"met", speedup >= 10.0},
                                   {"single_request_p99_ms", single_p99},
                                   {"unbatched_best_rps", none_best},
                                   {"batched_best_rps_within_2x_p99", batched_best},
                                   {"at_clients", at_clients}};
    fmt::print("target: dynamic batching {:.1f}x the requests/s of one at a time ({:.0f} vs {:.0f} req/s, at load {} "
               "with p99 <= 2 x {} ms) -> {} (>= 10x)\n",
               speedup, batched_best, none_best, at_clients, ms(single_p99), speedup >= 10 ? "met" : "NOT met");
  }
  const auto dyn = find("dynamic"), gra = find("graphs");
  if (!dyn.empty() && !gra.empty()) {
    std::vector<double> e_dyn, e_gra;
    for (const auto* p : dyn) e_dyn.push_back(p->server.enqueue.median);
    for (const auto* p : gra) e_gra.push_back(p->server.enqueue.median);
    const double md = report::summarize(e_dyn).median, mg = report::summarize(e_gra).median;
    const double ratio = mg > 0 ? md / mg : 0;
    targets["graph_enqueue_reduction"] = {{"value", ratio}, {"target", 3.0}, {"met", ratio >= 3.0},
                                          {"plain_enqueue_us", md * 1e3}, {"graph_enqueue_us", mg * 1e3}};
    fmt::print("target: per-bucket graphs cut median enqueue time {:.1f}x ({:.1f} -> {:.1f} us) -> {} (>= 3x)\n", ratio,
               md * 1e3, mg * 1e3, ratio >= 3 ? "met" : "NOT met");
  }

#if defined(STREAMPIPE_HAVE_CUBLAS)
  if (gpu) {
    // The MLP's compute at max batch and around it; the GEMMs with the search's choices and
    // with cuBLASLt's heuristic's first answers, its own best guess and the search's bar.
    report::Table gemm({"batch", "forward TFLOP/s", "min", "max", "GEMMs TFLOP/s", "min", "max",
                        "heuristic #0 TFLOP/s", "min", "max", "gain", "verified"});
    nlohmann::json curve = nlohmann::json::array();
    serve::MlpRate at_max;
    const std::size_t max_batch = policy.max_batch_size;
    for (const std::size_t rows : {max_batch / 4, max_batch, max_batch * 4, max_batch * 16}) {
      if (rows == 0 || rows > 65536) continue;
      const auto rate = serve::measure_mlp_rate(*device, *model, pool, rows, bo.runs);
      if (!rate.verified) verification_failed = true;
      if (rows == max_batch) at_max = rate;
      const auto cells = [](const report::Summary& s) {
        return std::vector<std::string>{fmt::format("{:.1f}", s.median), fmt::format("{:.1f}", s.min),
                                        fmt::format("{:.1f}", s.max)};
      };
      std::vector<std::string> row{std::to_string(rows)};
      for (const auto* s : {&rate.tflops, &rate.gemm_tflops, &rate.heuristic_gemm_tflops}) {
        const auto c = cells(*s);
        row.insert(row.end(), c.begin(), c.end());
      }
      row.push_back(fmt::format("{:.3f}x", rate.gain()));
      row.push_back(rate.verified ? "yes" : fmt::format("NO (worst {:.2f})", rate.worst_error));
      gemm.add_row(row);
      curve.push_back({{"batch", rows}, {"tflops", rate.tflops}, {"gemm_tflops", rate.gemm_tflops},
                       {"heuristic_gemm_tflops", rate.heuristic_gemm_tflops}, {"gemm_gain", rate.gain()},
                       {"verified", rate.verified}});
    }
    fmt::print("\n{}", gemm.str(fmt::format("MLP compute alone, each replayed as one CUDA graph as the per-bucket "
                                            "plans run it: forward passes with their float <-> bf16 conversions "
                                            "(median of {} runs of 10), and the layers' GEMMs alone, chained as in "
                                            "a pass (median over passes, events around each), with the "
                                            "configurations the algorithm search chose and with the heuristic's "
                                            "first answers, a run of each in turn; 'gain' is the first over the "
                                            "second",
                                            std::max(5, bo.runs))));
    out["mlp_rate_by_batch"] = curve;
    fmt::print("\n{}", serve::gemm_choice_table(*model));
    out["gemm_choices"] = serve::gemm_choices_json(*model);
    if (at_max.rows > 0)
      fmt::print("the MLP's GEMMs at batch {}: {:.1f} TFLOP/s with the search's choices, {:.1f} with the "
                 "heuristic's first answers ({:.3f}x)\n",
                 at_max.rows, at_max.gemm_tflops.median, at_max.heuristic_gemm_tflops.median, at_max.gain());
  }
#endif
  out["targets"] = targets;

  if (!bo.json_path.empty()) report::write_file_atomically(bo.json_path, out.dump(2) + "\n");
  if (!so.report_json.empty()) report::write_file_atomically(so.report_json, report_runs.dump() + "\n");
  if (!so.svg_path.empty()) {
    std::vector<serve::PlotSeries> series;
    for (const auto& mode : modes) {
      serve::PlotSeries s{mode.short_label, {}};
      for (const auto& p : points)
        if (p.mode == mode.key)
          s.points.push_back({p.latency.p99, p.qps.median, open_loop ? static_cast<int>(p.rate) : p.clients});
      series.push_back(std::move(s));
    }
    report::write_file_atomically(so.svg_path,
                              serve::throughput_latency_svg(fmt::format("{} on {}", model_name, device_name), series));
  }
  if (verification_failed) {
    fmt::print(stderr, "serve-bench: some requests failed or did not match the CPU reference (see 'verified')\n");
    return 1;
  }
  return 0;
}

Command add_serve(CLI::App& parent, const char* name, const char* help) {
  auto* sub = parent.add_subcommand(name, help);
  auto so = std::make_shared<ServeOptions>();
  auto bo = add_bench_options(*sub, 5);
  sub->add_option("--layers", so->layers,
                  "the MLP: input size, then each layer's output size, comma-separated (multiples of 8)")
      ->capture_default_str();
  sub->add_option("--concurrency", so->concurrency, "closed-loop client counts to sweep")
      ->delimiter(',')->capture_default_str();
  sub->add_option("--rate", so->rates, "open loop: sweep these offered request rates (per second) instead of "
                                      "--concurrency")
      ->delimiter(',');
  sub->add_option("--modes", so->modes, "none (one at a time), dynamic (batching, plain launches), graphs (batching, "
                                        "a CUDA graph per bucket)")
      ->delimiter(',')->capture_default_str();
  sub->add_option("--max-batch", so->max_batch, "largest batch (and largest bucket)")
      ->capture_default_str()->check(CLI::Range(1, 65536));
  sub->add_option("--preferred", so->preferred, "preferred batch sizes (the buckets; default: powers of two)")
      ->delimiter(',');
  sub->add_option("--max-delay-us", so->max_delay_us, "longest a request waits for company while a lane is idle")
      ->capture_default_str()->check(CLI::Range(0, 10000000));
  sub->add_option("--lanes", so->lanes, "execution lanes (streams with their own buffers) for batching modes")
      ->capture_default_str()->check(CLI::Range(1, 64));
  sub->add_option("--queue", so->queue, "bounded queue size (requests beyond it are rejected)")
      ->capture_default_str()->check(CLI::Range(1, 1 << 24));
  sub->add_option("--sync", so->sync, "how lanes wait for the GPU: spin or blocking")->capture_default_str();
  sub->add_option("--io", so->io,
                  "how a batch reaches the GPU: copy (H2D and D2H copies into device buffers) or mapped (the "
                  "model's first and last kernels read and write each request's row through the link: in place "
                  "for pinned requests, else in the batcher's pinned staging)")
      ->capture_default_str();
  sub->add_option("--request-memory", so->request_memory,
                  "where clients keep their requests' inputs and outputs: pinned (page-locked; with mapped I/O the "
                  "GPU reads and writes them in place) or pageable (ordinary memory, copied through the batcher's "
                  "staging); on the host backend always pageable")
      ->capture_default_str();
  sub->add_option("--client", so->client,
                  "closed-loop client model: sync (a thread per client waiting on a future, a wake-up per request) "
                  "or async (clients resubmit from the completion callback, like perf_analyzer --async)")
      ->capture_default_str();
  sub->add_option("--idle-spin-us", so->idle_spin_us,
                  "how long an idle lane polls the queue before it sleeps (0: at once); polling spares a "
                  "thread wake-up per batch and costs a busy core per polling lane")
      ->capture_default_str()->check(CLI::Range(0, 10000000));
  sub->add_option("--backend", so->backend, "auto, gpu or host (the host backend runs the CPU reference)")
      ->capture_default_str();
  sub->add_option("--window-ms", so->window_ms, "length of one timing window (--runs measured, --warmup untimed)")
      ->capture_default_str()->check(CLI::Range(1.0, 600000.0));
  sub->add_option("--seed", so->seed, "seed of the random weights and inputs")->capture_default_str();
  sub->add_flag("--report", so->report, "print the full latency report (enqueue, H2D, compute, D2H) of every point");
  sub->add_option("--report-json", so->report_json, "write every point's report with every query's timestamps to FILE");
  sub->add_option("--svg", so->svg_path, "write the throughput / p99 latency plot to FILE");
  return {sub, [so, bo] { return run_serve_bench(*so, *bo); }};
}

Command add_serve_bench(CLI::App& parent) {
  return add_serve(parent, "serve-bench",
                   "Serve a bf16 MLP (cuBLASLt) through the dynamic batcher to a closed-loop concurrency sweep: "
                   "throughput and p50/p90/p99 latency without batching, with dynamic batching, and with a CUDA graph "
                   "per batch-size bucket; outputs checked against a CPU reference; table, JSON and SVG.");
}

Command add_bench_serve(CLI::App& parent) {
  return add_serve(parent, "serve", "The serve-bench experiment (see `streampipe serve-bench --help`).");
}

}  // namespace

STREAMPIPE_COMMAND(add_serve_bench);
STREAMPIPE_BENCHMARK(add_bench_serve);

}  // namespace streampipe::cli
