// SPDX-License-Identifier: Apache-2.0
// `bench jit`: runtime kernels on the GPU.
//  - cold compile (NVRTC + cache store + module load) and warm-cache load (disk entry
//    verified + module load) of a small raw kernel and of a generated elementwise kernel;
//    target: warm load <= 2 ms;
//  - "SourceModule vs ElementwiseKernel" redone correctly: a 10M-element float add as a
//    raw kernel covering the whole array and as an ElementwiseKernel, timed with events
//    after warm-up, in GB/s against device-to-device copy bandwidth; target >= 85%;
//  - a sum of 100M floats with ReductionKernel against the same memory bandwidth; >= 80%.
// Every output is checked against a CPU reference; inputs are random, outputs poisoned
// before every run.

#include "benchmarks.hpp"
#include "harness/measure.hpp"

#include "streampipe/cuda/bandwidth.hpp"
#include "streampipe/cuda/device_buffer.hpp"
#include "streampipe/jit/elementwise.hpp"
#include "streampipe/jit/module_cache.hpp"
#include "streampipe/jit/reduction.hpp"

#include <fmt/format.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <random>
#include <unistd.h>

namespace streampipe::bench {
namespace {

namespace fs = std::filesystem;
using jit::CacheOptions;
using jit::LoadStats;

const char* raw_add_source = R"(
extern "C" __global__ void add(const float* a, const float* b, float* c, unsigned long long n) {
  const unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}
)";

// A row before it is printed: what its figure is held against.
struct JitRow {
  Row row;
  double limit = 0;   // GB/s yardstick; 0 for times
  double target = 0;  // fraction of the limit, or a time bound in ms
  bool lower_is_better = false;
  std::string note;
  [[nodiscard]] double percent() const { return limit > 0 ? 100.0 * row.summary().median / limit : 0.0; }
  [[nodiscard]] bool meets() const {
    if (target <= 0) return true;
    return lower_is_better ? row.summary().median <= target : percent() >= 100.0 * target;
  }
};

JitRow make_row(std::string name, std::string unit, const Samples& s, double limit, double target, bool lower_is_better,
                std::string note) {
  JitRow r{{std::move(name), std::move(unit), s.values, s.verified, false, {}, nlohmann::json::object()},
           limit, target, lower_is_better, std::move(note)};
  return r;
}

class TempDirectory {
 public:
  TempDirectory() {
    std::string tmpl = (fs::temp_directory_path() / "streampipe-bench-jit-XXXXXX").string();
    if (::mkdtemp(tmpl.data()) == nullptr) throw std::runtime_error("cannot create a temporary cache directory");
    path_ = tmpl;
  }
  ~TempDirectory() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  TempDirectory(const TempDirectory&) = delete;
  TempDirectory& operator=(const TempDirectory&) = delete;
  [[nodiscard]] const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

std::vector<float> random_floats(std::size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(0.0f, 1.0f);
  std::vector<float> v(n);
  for (auto& x : v) x = dist(rng);
  return v;
}

// On the timed stream (which does not synchronize with the legacy default stream), so the
// poison lands before the run's kernels and never inside the events' interval.
template <typename T>
void poison(StreamRef stream, const DeviceBuffer<T>& d) {
  SP_CUDA_CHECK(cudaMemsetAsync(d.data(), 0xff, d.bytes(), stream.handle()));
}

bool verify_add(const DeviceBuffer<float>& dc, const std::vector<float>& a, const std::vector<float>& b) {
  std::vector<float> c(a.size());
  SP_CUDA_CHECK(cudaMemcpy(c.data(), dc.data(), dc.bytes(), cudaMemcpyDeviceToHost));
  for (std::size_t i = 0; i < a.size(); ++i)
    if (c[i] != a[i] + b[i]) {
      fmt::print(stderr, "mismatch at {}: {} != {} + {}\n", i, c[i], a[i], b[i]);
      return false;
    }
  return true;
}

// Cold compiles (a fresh program each run: `compile(r)` must report LoadOrigin::compiled)
// and warm loads from the disk cache (the same program each run), host clock.
std::pair<Samples, Samples> cold_and_warm(int warmup, int runs, const std::function<LoadStats(int)>& compile,
                                          const std::function<LoadStats()>& load) {
  int r = 0;
  const Samples cold = measure(warmup, runs, {{}, [&] {
    LoadStats s;
    const double t = wall_ms([&] { s = compile(r++); });
    if (s.origin != jit::LoadOrigin::compiled) throw std::runtime_error("cold compile hit a cache");
    return t;
  }, {}});
  (void)load();  // the first load after the cache was filled
  const Samples warm = measure(warmup, runs, {{}, [&] {
    LoadStats s;
    const double t = wall_ms([&] { s = load(); });
    if (s.origin != jit::LoadOrigin::disk) throw std::runtime_error("warm load missed the disk cache: " + s.cache_warning);
    return t;
  }, {}});
  return {cold, warm};
}

void run_jit(State& state) {
  const std::size_t n = state.get<std::size_t>("elements"), m = state.get<std::size_t>("reduce-elements");
  const int launches = state.get<int>("launches"), warmup = state.warmup(), runs = state.runs();
  const Device gpu(state.device());
  state.set_device(gpu.index(), gpu.name());
  Stream stream(gpu);
  EventTimer timer(gpu);
  const double d2d = link_limits(gpu).gbps("d2d");
  TempDirectory cache_dir;
  CacheOptions disk_only;
  disk_only.memory = false;
  disk_only.directory = cache_dir.path();
  CacheOptions cached;  // memory and disk, in the temporary directory
  cached.directory = cache_dir.path();
  std::vector<JitRow> rows;
  // A nonce keeps this run's programs out of any cache filled earlier.
  const std::string nonce = fmt::format("{}-{}", ::getpid(), std::chrono::steady_clock::now().time_since_epoch().count());
  // GPU time per launch: `launches` back to back between two events, so launch gaps on an
  // idle GPU do not count; outputs poisoned before every run.
  const auto time_launches = [&](const std::function<void()>& poison_output, const std::function<void()>& launch) {
    return measure(warmup, runs, {poison_output, [&] {
      return timer.ms(stream.ref(), [&] { for (int l = 0; l < launches; ++l) launch(); }) / launches;
    }, {}});
  };
  const auto gbps = [](const Samples& ms, double bytes) { return Samples{per_second(ms.values, bytes / 1e9), ms.verified}; };

  // --- compile and load -------------------------------------------------------------------
  {
    std::vector<double> nvrtc;
    const jit::Program warm_program("add.cu", fmt::format("{}// {} warm\n", raw_add_source, nonce));
    const auto [cold, warm] = cold_and_warm(warmup, runs, [&](int r) {
      LoadStats s;
      (void)jit::load_module(gpu, jit::Program("add.cu", fmt::format("{}// {} {}\n", raw_add_source, nonce, r)), disk_only, &s);
      if (r >= warmup) nvrtc.push_back(s.compile_ms);
      return s;
    }, [&] {
      LoadStats s;
      (void)jit::load_module(gpu, warm_program, disk_only, &s);
      return s;
    });
    rows.push_back(make_row("raw kernel: cold compile + load", "ms", cold, 0, 0, true,
                            fmt::format("NVRTC alone {:.1f} ms", report::summarize(nvrtc).median)));
    rows.push_back(make_row("raw kernel: warm disk-cache load", "ms", warm, 0, 2.0, true,
                            "key + verified read + cuModuleLoadData"));
  }
  {
    const std::string params = "const float* a, const float* b, float* c", op = "c[i] = a[i] + b[i]";
    const auto options = [&](const std::string& tag) {
      jit::ElementwiseOptions eo;
      eo.cache = disk_only;
      eo.preamble = fmt::format("// {} {}", nonce, tag);
      return eo;
    };
    const auto [cold, warm] = cold_and_warm(warmup, runs, [&](int r) {
      return jit::ElementwiseKernel(params, op, options(std::to_string(r))).prepare(gpu);
    }, [&] { return jit::ElementwiseKernel(params, op, options("warm")).prepare(gpu); });
    rows.push_back(make_row("ElementwiseKernel: cold generate + compile + load", "ms", cold, 0, 0, true,
                            "two kernels (plain + vectorized)"));
    rows.push_back(make_row("ElementwiseKernel: warm disk-cache load", "ms", warm, 0, 2.0, true,
                            "generate + key + verified read + load"));
  }

  // --- SourceModule vs ElementwiseKernel: c = a + b -----------------------------------------
  const auto a = random_floats(n, 1), b = random_floats(n, 2);
  DeviceBuffer<float> da(gpu, n), db(gpu, n), dc(gpu, n);
  SP_CUDA_CHECK(cudaMemcpy(da.data(), a.data(), da.bytes(), cudaMemcpyHostToDevice));
  SP_CUDA_CHECK(cudaMemcpy(db.data(), b.data(), db.bytes(), cudaMemcpyHostToDevice));
  const double add_bytes = 3.0 * sizeof(float) * static_cast<double>(n);
  {
    const jit::Module module = jit::load_module(gpu, jit::Program("add.cu", raw_add_source), cached);
    const auto add = module.kernel<void(const float*, const float*, float*, unsigned long long)>("add");
    const auto cfg = LaunchConfig::for_elements(gpu, n, 256);
    const Samples ms = time_launches([&] { poison(stream.ref(), dc); }, [&] {
      add.launch(stream.ref(), cfg, da.data(), db.data(), dc.data(), static_cast<unsigned long long>(n));
    });
    rows.push_back(make_row(fmt::format("SourceModule-style add, {} floats", n), "GB/s", gbps(ms, add_bytes), d2d, 0.85,
                            false, fmt::format("{} blocks x 256, one element per thread", cfg.grid.x)));
    rows.back().row.verified = verify_add(dc, a, b);
  }
  {
    jit::ElementwiseOptions eo;
    eo.cache = cached;
    const jit::ElementwiseKernel add("const float* a, const float* b, float* c", "c[i] = a[i] + b[i]", eo);
    (void)add.prepare(gpu);
    jit::ElementwiseLaunch info;
    const Samples ms = time_launches([&] { poison(stream.ref(), dc); },
                                     [&] { info = add(stream.ref(), n, da.data(), db.data(), dc.data()); });
    rows.push_back(make_row(fmt::format("ElementwiseKernel add, {} floats", n), "GB/s", gbps(ms, add_bytes), d2d, 0.85,
                            false,
                            fmt::format("{} blocks x {}, {}", info.config.grid.x, info.config.block.x,
                                        info.vectorized ? "16-byte vectorized" : "scalar")));
    rows.back().row.verified = verify_add(dc, a, b);
  }

  // --- sum of 100M floats -----------------------------------------------------------------
  {
    const auto x = random_floats(m, 3);
    DeviceBuffer<float> dx(gpu, m), out(gpu, 1);
    SP_CUDA_CHECK(cudaMemcpy(dx.data(), x.data(), dx.bytes(), cudaMemcpyHostToDevice));
    // Freed partials stay in the pool between launches instead of going back to the OS.
    (void)set_default_pool_release_threshold(gpu, std::size_t{64} << 20);
    jit::ReductionOptions ro;
    ro.cache = cached;
    const jit::ReductionKernel sum("float", "const float* x", "x[i]", "a + b", "0.0f", ro);
    (void)sum.prepare(gpu);
    jit::ReductionLaunch info;
    const Samples ms = time_launches([&] { poison(stream.ref(), out); }, [&] { info = sum(stream.ref(), m, out.data(), dx.data()); });
    float got = 0;
    SP_CUDA_CHECK(cudaMemcpy(&got, out.data(), sizeof got, cudaMemcpyDeviceToHost));
    double reference = 0;
    for (const float v : x) reference += v;
    rows.push_back(make_row(fmt::format("ReductionKernel sum, {} floats", m), "GB/s",
                            gbps(ms, sizeof(float) * static_cast<double>(m)), d2d, 0.80, false,
                            fmt::format("{} blocks x {} + 1 block; got {:.6g}, CPU {:.6g}", info.first_pass.grid.x,
                                        info.first_pass.block.x, got, reference)));
    rows.back().row.verified = std::abs(got - reference) <= 1e-5 * std::abs(reference);
  }

  Table t;
  t.name = "jit";
  t.title = fmt::format("bench jit on {} (GPU {}): median of {} runs after {} warm-up; kernels timed with events over {} "
                        "launches; limit = device-to-device copy {:.0f} GB/s (read + write)",
                        gpu.name(), gpu.index(), runs, warmup, launches, d2d);
  t.headers = {"measurement", "median", "min", "max", "unit", "vs limit", "target", "ok", "notes"};
  using report::Align;
  t.align = {Align::left, Align::right, Align::right, Align::right, Align::left,
             Align::right, Align::left, Align::left, Align::left};
  for (auto& r : rows) {
    const auto s = r.row.summary();
    const std::string vs = r.limit > 0 ? fmt::format("{:.1f}% of {:.0f}", r.percent(), r.limit) : "";
    const std::string target = r.target <= 0 ? "" : r.lower_is_better ? fmt::format("<= {:g} ms", r.target)
                                                                      : fmt::format(">= {:.0f}%", 100 * r.target);
    r.row.cells = {r.row.name, fmt::format("{:.3f}", s.median), fmt::format("{:.3f}", s.min),
                   fmt::format("{:.3f}", s.max), r.row.unit, vs, target,
                   !r.row.verified ? "WRONG" : r.meets() ? "yes" : "no", r.note};
    r.row.fields = {{"note", r.note}, {"meets_target", r.meets()}};
    if (r.limit > 0) r.row.fields["limit_gbps"] = r.limit, r.row.fields["percent_of_limit"] = r.percent();
    if (r.target > 0)
      r.row.fields["target"] = r.lower_is_better ? nlohmann::json{{"max_ms", r.target}}
                                                 : nlohmann::json{{"min_fraction_of_limit", r.target}};
    t.rows.push_back(std::move(r.row));
  }
  state.result().limits = {{"d2d_gbps", d2d}};
  state.result().fields = {{"nvrtc_version", jit::nvrtc_version()}, {"arch", jit::default_arch(gpu)},
                           {"launches_per_run", launches}};
  state.add_table(std::move(t));
}

}  // namespace

Benchmark jit_benchmark() {
  Benchmark b;
  b.name = "jit";
  b.description =
      "Runtime kernels: compile and disk-cache load times, generated elementwise and reduction kernels against a "
      "hand-written one and the copy bound. See docs/jit.md.";
  b.needs_gpu = true;
  b.mismatch = "an output did not match its CPU reference";
  using I = std::int64_t;
  b.parameters = {
      {"elements", "floats per array in the add comparison", I{10'000'000}, 1, static_cast<double>(I{1} << 31)},
      {"reduce-elements", "floats summed by the reduction", I{100'000'000}, 1, static_cast<double>(I{1} << 32)},
      {"launches", "kernel launches per timed run", I{20}, 1, 10000},
  };
  b.run = run_jit;
  return b;
}

}  // namespace streampipe::bench
