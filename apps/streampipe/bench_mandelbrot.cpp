// SPDX-License-Identifier: Apache-2.0
// `streampipe bench mandelbrot`: pixel-iterations per second of the float and double
// kernels on two views (the whole set, and a deep detail where most pixels iterate long),
// against the device's arithmetic issue bound, with the host reference's rate alongside.
//
// Rate: the iterations actually performed (the sum of the escape counts) per second of
// kernel time (events around each launch). Bound: each iteration issues 8 floating-point
// instructions (3 multiplies, 5 adds; no fused multiply-add so the results match the
// host), so SMs x FP lanes per SM x clock / 8; FP lanes per SM are 128 (float) and 64
// (double) on sm_90, 64 and 32 on sm_80; 0 (not shown) elsewhere.
// Verification: the double kernel must equal the host double reference on every pixel;
// for float the differing pixels are counted, and how many lie on escape boundaries.

#include "commands.hpp"

#include "streampipe/cuda/device_buffer.hpp"
#include "streampipe/cuda/event.hpp"
#include "streampipe/report/atomic_file.hpp"
#include "streampipe/report/host_info.hpp"
#include "streampipe/report/statistics.hpp"
#include "streampipe/report/table.hpp"
#include "streampipe/tools/mandelbrot.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <chrono>
#include <memory>
#include <numeric>

namespace streampipe::cli {
namespace {

using namespace streampipe::tools::mandelbrot;

struct View {
  std::string name;
  Params params;
};

struct Row {
  std::string view;
  Precision precision = Precision::double_;
  std::uint64_t iterations = 0;  // summed escape counts
  report::Summary rate;          // pixel-iterations/s
  double bound = 0;
  Comparison comparison;
  double host_rate = 0;          // host reference, same view, double
  bool verified = false;
};

double fp_bound(const Device& gpu, Precision p) {
  const auto& props = gpu.properties();
  int lanes = 0;
  if (props.major == 9) lanes = p == Precision::single ? 128 : 64;
  if (props.major == 8 && props.minor == 0) lanes = p == Precision::single ? 64 : 32;
  int clock_khz = 0;
  SP_CUDA_CHECK(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, gpu.index()));
  return static_cast<double>(props.multiProcessorCount) * lanes * clock_khz * 1e3 / 8.0;
}

int run_bench_mandelbrot(const BenchOptions& bo, std::uint32_t scale_percent) {
  if (Device::count() == 0) {
    fmt::print(stderr, "bench mandelbrot needs a CUDA device: {}\n", Device::unavailable_reason().value_or("?"));
    return 1;
  }
  const Device gpu(bo.device);
  Stream stream(gpu);
  const auto scaled = [&](std::uint32_t v) { return std::max(1u, v * scale_percent / 100); };
  std::vector<View> views(2);
  views[0].name = "whole set";
  views[0].params.width = scaled(3840);
  views[0].params.height = scaled(2160);
  views[0].params.region = Region::centered(-0.75, 0.0, 3.5, views[0].params.width, views[0].params.height);
  views[0].params.max_iterations = 1000;
  views[1].name = "seahorse valley";
  views[1].params.width = scaled(1920);
  views[1].params.height = scaled(1080);
  views[1].params.region = Region::centered(-0.743643887, 0.131825904, 0.0002, views[1].params.width,
                                            views[1].params.height);
  views[1].params.max_iterations = 4096;

  std::vector<Row> rows;
  bool all_ok = true;
  for (const auto& v : views) {
    const Params& p = v.params;
    fmt::print(stderr, "{}: host reference...\n", v.name);
    const auto t0 = std::chrono::steady_clock::now();
    const auto reference = compute_host(p, Precision::double_);
    const double host_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const double ref_iterations = static_cast<double>(std::accumulate(reference.begin(), reference.end(), std::uint64_t{0}));
    DeviceBuffer<std::uint32_t> d(gpu, p.pixels());
    for (const Precision prec : {Precision::single, Precision::double_}) {
      Row row;
      row.view = v.name;
      row.precision = prec;
      row.host_rate = ref_iterations / host_s;
      SP_CUDA_CHECK(cudaMemsetAsync(d.data(), 0xff, d.bytes(), stream.handle()));  // poison
      // One untimed launch gives the iteration count the rates are computed from (also with
      // --warmup 0); the warm-up runs follow.
      compute_device(stream.ref(), p, prec, d.data());
      for (int w = 0; w < bo.warmup; ++w) compute_device(stream.ref(), p, prec, d.data());
      std::vector<std::uint32_t> counts(p.pixels());
      SP_CUDA_CHECK(cudaMemcpyAsync(counts.data(), d.data(), d.bytes(), cudaMemcpyDeviceToHost, stream.handle()));
      stream.synchronize();
      row.iterations = std::accumulate(counts.begin(), counts.end(), std::uint64_t{0});
      Event start(gpu), stop(gpu);
      std::vector<double> rates;
      for (int r = 0; r < bo.runs; ++r) {
        SP_CUDA_CHECK(cudaMemsetAsync(d.data(), 0xff, d.bytes(), stream.handle()));
        start.record(stream.ref());
        compute_device(stream.ref(), p, prec, d.data());
        stop.record(stream.ref());
        stop.synchronize();
        rates.push_back(static_cast<double>(row.iterations) / (elapsed(start, stop).count() / 1e3));
      }
      // The last timed run's output is what gets checked.
      SP_CUDA_CHECK(cudaMemcpyAsync(counts.data(), d.data(), d.bytes(), cudaMemcpyDeviceToHost, stream.handle()));
      stream.synchronize();
      row.rate = report::summarize(rates);
      row.bound = fp_bound(gpu, prec);
      row.comparison = compare(reference, counts, p.width, p.height);
      row.verified = prec == Precision::single || row.comparison.differing == 0;
      all_ok = all_ok && row.verified;
      rows.push_back(row);
    }
  }

  report::Table table({"view", "precision", "pixel-iter/s", "min", "max", "vs FP bound", "host double", "speed-up",
                       "differ", "on boundary", "ok"},
                      {report::Align::left, report::Align::left, report::Align::right, report::Align::right,
                       report::Align::right, report::Align::right, report::Align::right, report::Align::right,
                       report::Align::right, report::Align::right, report::Align::left});
  nlohmann::json results = nlohmann::json::array();
  for (const auto& r : rows) {
    table.add_row({r.view, std::string(to_string(r.precision)), fmt::format("{:.3g}", r.rate.median),
                   fmt::format("{:.3g}", r.rate.min), fmt::format("{:.3g}", r.rate.max),
                   r.bound > 0 ? fmt::format("{:.1f}% of {:.3g}", 100 * r.rate.median / r.bound, r.bound) : "n/a",
                   fmt::format("{:.3g}", r.host_rate), fmt::format("{:.0f}x", r.rate.median / r.host_rate),
                   std::to_string(r.comparison.differing), std::to_string(r.comparison.differing_boundary),
                   r.verified ? "yes" : "WRONG"});
    nlohmann::json j = {{"view", r.view},
                        {"precision", to_string(r.precision)},
                        {"iterations", r.iterations},
                        {"pixel_iterations_per_s", r.rate},
                        {"host_double_pixel_iterations_per_s", r.host_rate},
                        {"differing_pixels", r.comparison.differing},
                        {"differing_boundary_pixels", r.comparison.differing_boundary},
                        {"max_difference", r.comparison.max_difference},
                        {"verified", r.verified}};
    if (r.bound > 0) j["bound_pixel_iterations_per_s"] = r.bound, j["percent_of_bound"] = 100 * r.rate.median / r.bound;
    results.push_back(j);
  }
  fmt::print("{}", table.str(fmt::format(
                       "bench mandelbrot on {} (GPU {}): iterations performed per second of kernel time, median of {} "
                       "runs after {} warm-up; bound = FP lanes x clock / 8 instructions per iteration",
                       gpu.name(), gpu.index(), bo.runs, bo.warmup)));
  if (!bo.json_path.empty()) {
    nlohmann::json jviews = nlohmann::json::array();
    for (const auto& v : views)
      jviews.push_back({{"name", v.name},
                        {"width", v.params.width},
                        {"height", v.params.height},
                        {"region", {v.params.region.x0, v.params.region.x1, v.params.region.y0, v.params.region.y1}},
                        {"max_iterations", v.params.max_iterations}});
    nlohmann::json out = {{"benchmark", "mandelbrot"},
                          {"device", {{"index", gpu.index()}, {"name", gpu.name()}}},
                          {"host", report::describe_host()},
                          {"runs", bo.runs},
                          {"warmup", bo.warmup},
                          {"views", jviews},
                          {"results", results}};
    report::write_file_atomically(bo.json_path, out.dump(2) + "\n");
  }
  if (!all_ok) {
    fmt::print(stderr, "bench mandelbrot: the double kernel differs from the host double reference\n");
    return 1;
  }
  return 0;
}

Command add_bench_mandelbrot(CLI::App& parent) {
  auto* sub = parent.add_subcommand(
      "mandelbrot",
      "Mandelbrot float and double kernels in pixel-iterations/s on the whole set (3840x2160, 1000 "
      "iterations) and a deep detail (1920x1080, 4096 iterations), against the FP issue bound and the "
      "host reference; double must match the host exactly, float differences are counted.");
  auto bo = add_bench_options(*sub, 7);
  auto scale = std::make_shared<std::uint32_t>(100);
  sub->add_option("--scale-percent", *scale, "image sizes in percent of the defaults")->capture_default_str()
      ->check(CLI::Range(1u, 400u));
  return {sub, [bo, scale] { return run_bench_mandelbrot(*bo, *scale); }};
}

}  // namespace

STREAMPIPE_BENCHMARK(add_bench_mandelbrot);

}  // namespace streampipe::cli
