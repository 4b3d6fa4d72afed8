// SPDX-License-Identifier: Apache-2.0
// `bench mandelbrot`: pixel-iterations per second of the float and double kernels on two
// views (the whole set, and a deep detail where most pixels iterate long), against the
// device's arithmetic issue bound, with the host reference's rate alongside.
//
// Rate: the iterations actually performed (the sum of the escape counts) per second of
// kernel time (events around each launch). Bound: each iteration issues 8 floating-point
// instructions (3 multiplies, 5 adds; no fused multiply-add so the results match the
// host), so SMs x FP lanes per SM x clock / 8; FP lanes per SM are 128 (float) and 64
// (double) on sm_90, 64 and 32 on sm_80; 0 (not shown) elsewhere.
// Verification: the double kernel must equal the host double reference on every pixel;
// for float the differing pixels are counted, and how many lie on escape boundaries.

#include "benchmarks.hpp"
#include "harness/measure.hpp"

#include "streampipe/cuda/device_buffer.hpp"
#include "streampipe/tools/mandelbrot/compute.hpp"

#include <fmt/format.h>

#include <chrono>
#include <numeric>

namespace streampipe::bench {
namespace {

using namespace streampipe::tools::mandelbrot;

struct View {
  std::string name;
  Params params;
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

std::vector<View> views(std::uint32_t scale_percent) {
  const auto scaled = [&](std::uint32_t v) { return std::max(1u, v * scale_percent / 100); };
  std::vector<View> v(2);
  v[0].name = "whole set";
  v[0].params.width = scaled(3840);
  v[0].params.height = scaled(2160);
  v[0].params.region = Region::centered(-0.75, 0.0, 3.5, v[0].params.width, v[0].params.height);
  v[0].params.max_iterations = 1000;
  v[1].name = "seahorse valley";
  v[1].params.width = scaled(1920);
  v[1].params.height = scaled(1080);
  v[1].params.region = Region::centered(-0.743643887, 0.131825904, 0.0002, v[1].params.width, v[1].params.height);
  v[1].params.max_iterations = 4096;
  return v;
}

Row measure_view(State& state, const Device& gpu, Stream& stream, const View& v, Precision prec,
                 const std::vector<std::uint32_t>& reference, double host_rate) {
  const Params& p = v.params;
  DeviceBuffer<std::uint32_t> d(gpu, p.pixels());
  const auto poison = [&] { SP_CUDA_CHECK(cudaMemsetAsync(d.data(), 0xff, d.bytes(), stream.handle())); };
  std::vector<std::uint32_t> counts(p.pixels());
  const auto download = [&] {
    SP_CUDA_CHECK(cudaMemcpyAsync(counts.data(), d.data(), d.bytes(), cudaMemcpyDeviceToHost, stream.handle()));
    stream.synchronize();
  };
  // One untimed launch gives the iteration count the rates are computed from (also with
  // --warmup 0).
  poison();
  compute_device(stream.ref(), p, prec, d.data());
  download();
  const std::uint64_t iterations = std::accumulate(counts.begin(), counts.end(), std::uint64_t{0});
  EventTimer timer(gpu);
  const Samples ms = measure(state.warmup(), state.runs(), {poison, [&] {
    return timer.ms(stream.ref(), [&] { compute_device(stream.ref(), p, prec, d.data()); });
  }, {}});
  download();  // the last timed run's output is what gets checked
  const Comparison cmp = compare(reference, counts, p.width, p.height);
  Row row;
  row.name = fmt::format("{}, {}", v.name, to_string(prec));
  row.unit = "pixel-iterations/s";
  row.values = per_second(ms.values, static_cast<double>(iterations));
  row.verified = prec == Precision::single || cmp.differing == 0;
  const auto rate = row.summary();
  const double bound = fp_bound(gpu, prec);
  row.cells = {v.name, std::string(to_string(prec)), fmt::format("{:.3g}", rate.median), fmt::format("{:.3g}", rate.min),
               fmt::format("{:.3g}", rate.max),
               bound > 0 ? fmt::format("{:.1f}% of {:.3g}", 100 * rate.median / bound, bound) : "n/a",
               fmt::format("{:.3g}", host_rate), fmt::format("{:.0f}x", rate.median / host_rate),
               std::to_string(cmp.differing), std::to_string(cmp.differing_boundary), row.verified ? "yes" : "WRONG"};
  row.fields = {{"view", v.name},
                {"precision", to_string(prec)},
                {"iterations", iterations},
                {"host_double_pixel_iterations_per_s", host_rate},
                {"differing_pixels", cmp.differing},
                {"differing_boundary_pixels", cmp.differing_boundary},
                {"max_difference", cmp.max_difference}};
  if (bound > 0) row.fields["bound_pixel_iterations_per_s"] = bound, row.fields["percent_of_bound"] = 100 * rate.median / bound;
  return row;
}

void run_mandelbrot(State& state) {
  const Device gpu(state.device());
  state.set_device(gpu.index(), gpu.name());
  Stream stream(gpu);
  const auto all = views(state.get<std::uint32_t>("scale-percent"));
  Table t;
  t.name = "kernels";
  t.title = fmt::format("bench mandelbrot on {} (GPU {}): iterations performed per second of kernel time, median of {} "
                        "runs after {} warm-up; bound = FP lanes x clock / 8 instructions per iteration",
                        gpu.name(), gpu.index(), state.runs(), state.warmup());
  t.headers = {"view", "precision", "pixel-iter/s", "min", "max", "vs FP bound", "host double", "speed-up",
               "differ", "on boundary", "ok"};
  using report::Align;
  t.align = {Align::left, Align::left, Align::right, Align::right, Align::right, Align::right,
             Align::right, Align::right, Align::right, Align::right, Align::left};
  nlohmann::json jviews = nlohmann::json::array();
  for (const auto& v : all) {
    fmt::print(stderr, "{}: host reference...\n", v.name);
    const auto t0 = std::chrono::steady_clock::now();
    const auto reference = compute_host(v.params, Precision::double_);
    const double host_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const double host_rate =
        static_cast<double>(std::accumulate(reference.begin(), reference.end(), std::uint64_t{0})) / host_s;
    for (const Precision prec : {Precision::single, Precision::double_})
      t.rows.push_back(measure_view(state, gpu, stream, v, prec, reference, host_rate));
    jviews.push_back({{"name", v.name},
                      {"width", v.params.width},
                      {"height", v.params.height},
                      {"region", {v.params.region.x0, v.params.region.x1, v.params.region.y0, v.params.region.y1}},
                      {"max_iterations", v.params.max_iterations}});
  }
  state.result().fields = {{"views", jviews}};
  state.add_table(std::move(t));
}

}  // namespace

Benchmark mandelbrot_benchmark() {
  Benchmark b;
  b.name = "mandelbrot";
  b.description =
      "Mandelbrot float and double kernels in pixel-iterations/s against the FP issue bound; double checked "
      "exactly against the host. See docs/mandelbrot.md.";
  b.needs_gpu = true;
  b.mismatch = "the double kernel differs from the host double reference";
  b.parameters = {{"scale-percent", "image sizes in percent of the defaults", std::int64_t{100}, 1, 400}};
  b.run = run_mandelbrot;
  return b;
}

}  // namespace streampipe::bench
