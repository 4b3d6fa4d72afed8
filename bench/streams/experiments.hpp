// SPDX-License-Identifier: Apache-2.0
#pragma once
// The classic stream experiments of `bench streams`, side by side with what a user would
// write instead (the peers):
//   gray     N RGB 1920x1080 images -> gray: naive loop, one stream per image, engine
//   arrays   N arrays x 1M floats, the single-block 64-thread kernel: naive, stream per array, engine
//   user-kernel  the same arrays through a user's own runtime-compiled kernel: stream per array, engine
//   chunked  one large array through a light kernel: lanes x chunk sizes
//   overhead many tiny items: host time per item, batched and not
// Every output is poisoned before and verified after each run; times are wall clock around
// a synchronized run. Each experiment returns its rows (unit ms) with "bytes" (what the rate
// is computed from), "limit_gbps" (the physical limit those bytes are held against) and
// "detail" in their fields; streams.cpp turns them into the printed tables.

#include "harness/benchmark.hpp"
#include "harness/measure.hpp"

#include "streampipe/cuda/bandwidth.hpp"
#include "streampipe/pipeline/engine.hpp"

#include <cstddef>
#include <functional>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

namespace streampipe::bench::streams {

struct Config {
  int device = 0;
  std::vector<int> devices{0};  // the engine spreads over 1, 2, ... of them (rows per device count)
  int runs = 7;
  int warmup = 2;
  int images = 64;
  int arrays = 200;
  std::size_t chunked_mib = 1024;
  int overhead_items = 20000;
  int lanes = 0;          // 0: each experiment's own choice
  int batch = 0;          // arrays per launch for the engine in `arrays` (0: chosen)
  int depth = 0;          // slots per lane for the engine rows (0: chosen)
  int host_threads = 0;   // engine staging workers (0: one per core)
  int staging_mib = -1;   // engine input staging budget (-1: the engine's default; 0: a block per slot)
  std::string trace_dir;  // where to write Chrome traces and SVG Gantt charts of engine runs
  bool force = false;     // traces may replace existing files
};

// The traces `experiment` ("all" or one name) may write under `trace_dir` (the GPU's rows
// included): <name>.trace.json and <name>.svg of each engine run that write_trace() names.
[[nodiscard]] std::vector<std::string> trace_files(const std::string& trace_dir, const std::string& experiment);

struct Experiment {
  std::string name;
  std::string title;
  std::string limit_name;  // empty: the rows have no physical limit
  std::vector<Row> rows;
};

// `link` is null without a GPU (then only the host backend's engine rows run).
[[nodiscard]] Experiment gray_experiment(const Config& c, bool gpu, const LinkLimits* link);
[[nodiscard]] Experiment arrays_experiment(const Config& c, bool gpu, const LinkLimits* link);
// The same arrays through a user's own runtime-compiled kernel (GPU only: no rows without one).
[[nodiscard]] Experiment user_kernel_experiment(const Config& c, bool gpu, const LinkLimits* link);
[[nodiscard]] Experiment chunked_experiment(const Config& c, bool gpu, const LinkLimits* link);
[[nodiscard]] Experiment overhead_experiment(const Config& c, bool gpu);

// ---- shared by the experiments (common.cpp) ----------------------------------------------

// A row of wall-clock ms: `warmup` + `runs` runs of `body`, `poison` before and `verify`
// after each, outside the timing.
[[nodiscard]] Row timed_row(const std::string& name, int warmup, int runs, const std::function<void()>& poison,
                            const std::function<void()>& body, const std::function<bool()>& verify);

template <typename T>
[[nodiscard]] std::vector<T> random_values(std::size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::vector<T> v(n);
  if constexpr (std::is_floating_point_v<T>) {
    std::uniform_real_distribution<T> dist(-1000, 1000);
    for (auto& x : v) x = dist(rng);
  } else {
    for (auto& x : v) x = static_cast<T>(rng());
  }
  return v;
}

// Poison = the bitwise complement of the reference: differs from it in every byte.
void poison_with_complement(std::byte* out, const std::byte* ref, std::size_t n);

[[nodiscard]] pipeline::EngineOptions engine_options(bool gpu, int device, int lanes, int depth = 2);
// --depth, --host-threads and --staging-mib on top of whatever the planner or --lanes chose.
void apply_engine_overrides(const Config& c, pipeline::EngineOptions& o);
// The engine's description, bottleneck and busy share in the row's detail and fields.
void add_engine_details(Row& row, pipeline::Engine& engine);
// Writes <trace_dir>/<name>.trace.json and .svg of the engine's last run (nothing without
// --trace-dir); an existing file is an error unless c.force.
void write_trace(const Config& c, pipeline::Engine& engine, const std::string& name);

// One engine variant: every run submits n items made by make(i), then drains.
// The device sets the engine rows spread over beyond the first GPU: c.devices' first 2,
// first 3, ... (none with one GPU).
[[nodiscard]] std::vector<std::vector<int>> wider_device_sets(const Config& c);

[[nodiscard]] Row engine_row(const Config& c, pipeline::Engine& engine, const std::string& name, int runs, std::size_t n,
                             const std::function<pipeline::Item(std::size_t)>& make,
                             const std::function<void()>& poison, const std::function<bool()>& verify,
                             const std::string& trace, const std::string& note);

}  // namespace streampipe::bench::streams
