// SPDX-License-Identifier: Apache-2.0
#include "serve/points.hpp"

#include "streampipe/serving/batcher.hpp"
#include "streampipe/serving/host_executor.hpp"
#if defined(STREAMPIPE_HAVE_CUBLAS)
#include "streampipe/serving/gpu_executor.hpp"
#endif

#include <fmt/format.h>

#include <chrono>

namespace streampipe::bench::serve {
namespace {

using namespace streampipe::serving;

std::unique_ptr<BatchExecutor> make_executor(const Config& c, const Setup& s, const ModeSpec& mode, std::size_t lanes) {
#if defined(STREAMPIPE_HAVE_CUBLAS)
  if (s.gpu)
    return std::make_unique<GpuExecutor>(*s.device, *s.model,
                                         GpuExecutorOptions{lanes, mode.graphs, c.sync_mode(),
                                                            c.io == "mapped" ? BatchIo::mapped : BatchIo::copy});
#else
  (void)c;
  (void)mode;
#endif
  const std::size_t in_size = s.weights.input_size(), out_size = s.weights.output_size();
  return std::make_unique<HostExecutor>(in_size, out_size, lanes,
                                        [&s, in_size, out_size](std::span<const float> in, std::span<float> o,
                                                                std::size_t rows) {
                                          for (std::size_t r = 0; r < rows; ++r)
                                            mlp_reference(s.weights, in.subspan(r * in_size, in_size),
                                                          o.subspan(r * out_size, out_size));
                                        });
}

}  // namespace

std::vector<Point> serve_points(const Config& c, const Setup& s, nlohmann::json* report_runs,
                                const std::function<void(const std::string&)>& print) {
  const bool open_loop = c.open_loop();
  std::vector<Point> points;
  for (const auto& mode : c.modes) {
    const std::size_t lanes = mode.batching ? static_cast<std::size_t>(c.lanes) : 1;
    const std::unique_ptr<BatchExecutor> exec = make_executor(c, s, mode, lanes);
    BatcherOptions o;
    o.policy = mode.batching ? c.policy : BatchPolicy{1, {}, std::chrono::microseconds(0)};
    o.max_queue_size = static_cast<std::size_t>(c.queue);
    o.record_queries = true;
    o.idle_spin = std::chrono::microseconds(c.idle_spin_us);
    DynamicBatcher batcher(*exec, o);  // prepares (captures) every bucket's plan: the warm-up of the plans
    const std::size_t loads = open_loop ? c.rates.size() : c.concurrency.size();
    for (std::size_t li = 0; li < loads; ++li) {
      LoadOptions lo;
      lo.window_ms = c.window_ms;
      lo.warmup_windows = c.warmup;
      lo.windows = c.runs;
      lo.model = c.client_model();
      // The single-request reference (no batching, lowest load) bounds the batching target's
      // p99: 5 windows of one client hold ~700 requests, so their p99 rests on the 7 slowest
      // and one scheduling hiccup moves it 3x. Four times the windows: ~28 samples beyond it.
      if (!mode.batching && li == 0) lo.windows = c.runs * 4;
      Point p;
      p.mode = mode.key;
      if (open_loop) {
        p.rate = c.rates[li];
        const std::size_t slots = static_cast<std::size_t>(c.queue) + lanes * o.policy.max_batch_size;
        auto r = run_open_loop(batcher, s.pool, p.rate, slots, lo);
        p.load = std::move(r.load);
        p.dropped = r.dropped;
        p.rejected = r.rejected;
      } else {
        p.clients = c.concurrency[li];
        lo.clients = p.clients;
        p.load = run_closed_loop(batcher, s.pool, lo);
      }
      const std::string load_label =
          open_loop ? fmt::format("{:.0f} req/s offered", p.rate) : fmt::format("{} clients", p.clients);
      p.qps = report::summarize(p.load.window_qps);
      p.latency = report::summarize(p.load.latency_ms);
      report::LatencyRun run;
      run.name = fmt::format("{} | {} | {}", s.model_name, mode.label, load_label);
      run.device = s.device_name;
      run.sync = exec->sync_mode();
      run.limits.warmup_ms = c.window_ms * c.warmup;
      run.limits.duration_limit_ms = c.window_ms * static_cast<double>(lo.windows);
      run.wall_ms = c.window_ms * static_cast<double>(lo.windows);
      const double begin_ms = std::chrono::duration<double, std::milli>(p.load.measure_begin - batcher.origin()).count();
      const double end_ms = std::chrono::duration<double, std::milli>(p.load.measure_end - batcher.origin()).count();
      for (const auto& q : batcher.take_records())
        if (q.submit_ms >= begin_ms && q.complete_ms < end_ms) run.queries.push_back(q);
      p.server = report::summarize(run);
      if (c.report) print(report::format_report(run, p.server));
      if (report_runs != nullptr) report_runs->push_back(report::report_json(run, p.server));
      print(fmt::format("  {:<8} {:>20}: {:>10.0f} req/s, p50 {:.3f} ms, p99 {:.3f} ms, mean batch {:.1f}, verified {}/{}{}{}\n",
                        mode.key, load_label, p.qps.median, p.latency.median, p.latency.p99,
                        p.server.mean_batch, p.load.verified - p.load.mismatched, p.load.verified,
                        p.load.errors > 0 ? fmt::format(", {} errors: {}", p.load.errors, p.load.first_error) : "",
                        open_loop ? fmt::format(", {} rejected (queue full), {} dropped (client out of buffers)",
                                                p.rejected, p.dropped)
                                  : ""));
      points.push_back(std::move(p));
    }
    batcher.shutdown();
  }
  return points;
}

}  // namespace streampipe::bench::serve
