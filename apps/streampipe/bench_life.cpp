// SPDX-License-Identifier: Apache-2.0
// `streampipe bench life`: cell updates per second of each Life kernel on square boards
// (default 1024^2, 4096^2, 16384^2), against the memory-traffic bound of each layout, and
// many small universes on their own streams against the same universes run one by one.
//
// Verification: every kernel's first two generations from the random fill are compared
// with the CPU reference exactly, and after the timed runs (the same number of generations
// for every kernel, from the same start) the kernels' final boards must be identical.
// Bound: one generation must read and write the board once: 2 bytes per cell for the byte
// kernels, 2/8 byte for the bit-packed one; at the measured device-to-device copy rate
// (read + write) that gives the cell updates/s no kernel of that layout can beat.
// Target: bit-packed >= 2e12 cell updates/s on 16384^2.

#include "commands.hpp"

#include "streampipe/cuda/bandwidth.hpp"
#include "streampipe/cuda/event.hpp"
#include "streampipe/report/atomic_file.hpp"
#include "streampipe/report/host_info.hpp"
#include "streampipe/report/statistics.hpp"
#include "streampipe/report/table.hpp"
#include "streampipe/tools/life.hpp"
#include "streampipe/tools/life_universe.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <memory>
#include <sstream>

namespace streampipe::cli {
namespace {

using namespace streampipe::tools::life;

struct LifeBenchOptions {
  std::vector<std::uint32_t> sizes = {1024, 4096, 16384};
  std::vector<std::string> kernels = {"global", "shared", "bitpacked"};
  std::uint64_t generations = 0;  // per timed run; 0 = by size
  double density = 0.3;
  std::uint64_t seed = 2026;
  int universes = 16;
  std::uint32_t universe_size = 256;
};

constexpr double kTarget = 2e12;  // bit-packed, 16384^2

struct Row {
  std::uint32_t size = 0;
  Kernel kernel = Kernel::global_memory;
  std::uint64_t generations = 0;
  report::Summary rate;  // cell updates/s
  double bound = 0;      // cell updates/s
  bool verified = false;
  bool agree = true;
};

int run_bench_life(const BenchOptions& bo, const LifeBenchOptions& o) {
  if (Device::count() == 0) {
    fmt::print(stderr, "bench life needs a CUDA device: {}\n", Device::unavailable_reason().value_or("?"));
    return 1;
  }
  std::vector<Kernel> kernels;
  for (const auto& name : o.kernels) {
    const auto k = parse_kernel(name);
    if (!k) throw UsageError(fmt::format("--kernels: '{}' is not one of global, shared, bitpacked", name));
    kernels.push_back(*k);
  }
  const Device gpu(bo.device);
  const double d2d_gbps = link_limits(gpu).gbps("d2d");
  std::vector<Row> rows;
  bool all_ok = true;

  for (const std::uint32_t size : o.sizes) {
    const double cells = static_cast<double>(size) * size;
    const std::uint64_t gens = o.generations > 0
                                   ? o.generations
                                   : std::clamp<std::uint64_t>((std::uint64_t{1} << 34) / (std::uint64_t{size} * size),
                                                               8, 2000);
    fmt::print(stderr, "{}x{}: CPU reference for 2 generations...\n", size, size);
    const Board start = random_board(size, size, o.density, o.seed);
    const Board reference = advance_host(start, 2, 0);
    std::optional<Board> first_final;
    for (const Kernel k : kernels) {
      Row row;
      row.size = size;
      row.kernel = k;
      row.generations = gens;
      DeviceUniverse u(gpu, size, size, k);
      u.fill_random(o.seed, o.density);  // poisons the other buffer
      u.step(2);
      row.verified = u.download() == reference;
      u.fill_random(o.seed, o.density);
      for (int w = 0; w < bo.warmup; ++w) u.step(gens);
      Event start_event(gpu), stop_event(gpu);
      std::vector<double> rates;
      for (int r = 0; r < bo.runs; ++r) {
        start_event.record(u.stream());
        u.step(gens);
        stop_event.record(u.stream());
        stop_event.synchronize();
        rates.push_back(cells * static_cast<double>(gens) / (elapsed(start_event, stop_event).count() / 1e3));
      }
      row.rate = report::summarize(rates);
      const double bytes_per_cell = k == Kernel::bit_packed ? 2.0 / 8.0 : 2.0;
      row.bound = d2d_gbps * 1e9 / bytes_per_cell;
      Board final_board = u.download();
      if (!first_final)
        first_final = std::move(final_board);
      else
        row.agree = final_board == *first_final;
      all_ok = all_ok && row.verified && row.agree;
      rows.push_back(row);
      fmt::print(stderr, "  {:>9}: {:.3g} cell updates/s{}\n", to_string(k), row.rate.median,
                 row.verified && row.agree ? "" : "  WRONG");
    }
  }

  // Many small universes: one stream each, all enqueued before any wait, against the
  // naive loop that waits for each universe before starting the next.
  struct StreamsResult {
    report::Summary serial_ms, concurrent_ms;
    bool verified = false;
  } streams;
  {
    const std::uint32_t s = o.universe_size;
    const std::uint64_t gens = 200;
    std::vector<std::unique_ptr<DeviceUniverse>> us;
    for (int i = 0; i < o.universes; ++i) {
      us.push_back(std::make_unique<DeviceUniverse>(gpu, s, s, Kernel::shared_memory));
      us.back()->fill_random(o.seed + static_cast<std::uint64_t>(i), o.density);
    }
    const auto wall = [](auto&& f) {
      const auto t0 = std::chrono::steady_clock::now();
      f();
      return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    };
    std::vector<double> serial, concurrent;
    for (int r = 0; r < bo.warmup + bo.runs; ++r) {
      for (auto& u : us) u->synchronize();
      const double t_serial = wall([&] {
        for (auto& u : us) {
          u->step(gens);
          u->synchronize();
        }
      });
      const double t_concurrent = wall([&] {
        for (auto& u : us) u->step(gens);
        for (auto& u : us) u->synchronize();
      });
      if (r >= bo.warmup) {
        serial.push_back(t_serial);
        concurrent.push_back(t_concurrent);
      }
    }
    streams.serial_ms = report::summarize(serial);
    streams.concurrent_ms = report::summarize(concurrent);
    // Every universe ran 2 x (warmup + runs) x gens generations from its own random start.
    const std::uint64_t total = 2 * static_cast<std::uint64_t>(bo.warmup + bo.runs) * gens;
    streams.verified = true;
    for (int i = 0; i < std::min(o.universes, 2); ++i)
      streams.verified = streams.verified &&
                         us[static_cast<std::size_t>(i)]->download() ==
                             advance_host(random_board(s, s, o.density, o.seed + static_cast<std::uint64_t>(i)), total, 0);
    all_ok = all_ok && streams.verified;
  }

  report::Table table({"board", "kernel", "gens/run", "cell updates/s", "min", "max", "vs bound", "target", "ok"},
                      {report::Align::right, report::Align::left, report::Align::right, report::Align::right,
                       report::Align::right, report::Align::right, report::Align::right, report::Align::left,
                       report::Align::left});
  nlohmann::json results = nlohmann::json::array();
  for (const auto& r : rows) {
    const bool has_target = r.kernel == Kernel::bit_packed && r.size == 16384;
    const bool meets = !has_target || r.rate.median >= kTarget;
    table.add_row({fmt::format("{}^2", r.size), std::string(to_string(r.kernel)), std::to_string(r.generations),
                   fmt::format("{:.3g}", r.rate.median), fmt::format("{:.3g}", r.rate.min),
                   fmt::format("{:.3g}", r.rate.max), fmt::format("{:.1f}% of {:.3g}", 100 * r.rate.median / r.bound, r.bound),
                   has_target ? fmt::format(">= {:.0e}", kTarget) : "",
                   !(r.verified && r.agree) ? "WRONG" : meets ? "yes" : "no"});
    nlohmann::json j = {{"size", r.size},
                        {"kernel", to_string(r.kernel)},
                        {"generations_per_run", r.generations},
                        {"cell_updates_per_s", r.rate},
                        {"bound_cell_updates_per_s", r.bound},
                        {"percent_of_bound", 100 * r.rate.median / r.bound},
                        {"verified_against_cpu", r.verified},
                        {"kernels_agree", r.agree}};
    if (has_target) j["target_cell_updates_per_s"] = kTarget, j["meets_target"] = meets;
    results.push_back(j);
  }
  fmt::print("{}", table.str(fmt::format(
                       "bench life on {} (GPU {}): cell updates/s, median of {} runs after {} warm-up, events around "
                       "each run; bound = device-to-device copy {:.0f} GB/s / bytes moved per cell",
                       gpu.name(), gpu.index(), bo.runs, bo.warmup, d2d_gbps)));
  fmt::print("{} universes of {}^2 (shared kernel, 200 generations): one after another {:.2f} ms (min {:.2f}, max {:.2f}), "
             "on {} streams at once {:.2f} ms (min {:.2f}, max {:.2f}): {:.2f}x{}\n",
             o.universes, o.universe_size, streams.serial_ms.median, streams.serial_ms.min, streams.serial_ms.max,
             o.universes, streams.concurrent_ms.median, streams.concurrent_ms.min, streams.concurrent_ms.max,
             streams.serial_ms.median / streams.concurrent_ms.median, streams.verified ? "" : "  WRONG");
  if (!bo.json_path.empty()) {
    nlohmann::json out = {{"benchmark", "life"},
                          {"device", {{"index", gpu.index()}, {"name", gpu.name()}}},
                          {"host", report::describe_host()},
                          {"runs", bo.runs},
                          {"warmup", bo.warmup},
                          {"density", o.density},
                          {"limits", {{"d2d_gbps", d2d_gbps}}},
                          {"results", results},
                          {"streams",
                           {{"universes", o.universes},
                            {"size", o.universe_size},
                            {"kernel", "shared"},
                            {"generations", 200},
                            {"serial_ms", streams.serial_ms},
                            {"concurrent_ms", streams.concurrent_ms},
                            {"verified", streams.verified}}}};
    report::write_file_atomically(bo.json_path, out.dump(2) + "\n");
  }
  if (!all_ok) {
    fmt::print(stderr, "bench life: a kernel disagreed with the CPU reference or with the other kernels\n");
    return 1;
  }
  return 0;
}

Command add_bench_life(CLI::App& parent) {
  auto* sub = parent.add_subcommand(
      "life",
      "Conway's Life kernels (global memory, shared-memory tiles, bit-packed) in cell updates/s on "
      "square boards, against the memory-traffic bound of each layout (target: bit-packed >= 2e12 on "
      "16384^2), and many small universes on their own streams against a one-by-one loop. Every "
      "kernel is checked against the CPU reference and against the other kernels.");
  auto bo = add_bench_options(*sub, 7);
  auto o = std::make_shared<LifeBenchOptions>();
  sub->add_option("--sizes", o->sizes, "board sides (square boards)")->capture_default_str()
      ->check(CLI::Range(1u, 65536u))->delimiter(',');
  sub->add_option("--kernels", o->kernels, "kernels to time")->capture_default_str()->delimiter(',');
  sub->add_option("--generations", o->generations, "generations per timed run (0: about 2^34 cell updates)")
      ->capture_default_str();
  sub->add_option("--density", o->density, "live fraction of the random start")->capture_default_str()
      ->check(CLI::Range(0.0, 1.0));
  sub->add_option("--universes", o->universes, "universes in the streams experiment")->capture_default_str()
      ->check(CLI::Range(1, 256));
  sub->add_option("--universe-size", o->universe_size, "side of each universe in the streams experiment")
      ->capture_default_str()->check(CLI::Range(8u, 4096u));
  return {sub, [bo, o] { return run_bench_life(*bo, *o); }};
}

}  // namespace

STREAMPIPE_BENCHMARK(add_bench_life);

}  // namespace streampipe::cli
