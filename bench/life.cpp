// SPDX-License-Identifier: Apache-2.0
// `bench life`: cell updates per second of each Life kernel on square boards (default
// 1024^2, 4096^2, 16384^2), against the memory-traffic bound of each layout, and many small
// universes on their own streams against the same universes run one by one.
//
// Verification: every kernel's first two generations from the random fill are compared
// with the CPU reference exactly, and after the timed runs (the same number of generations
// for every kernel, from the same start) the kernels' final boards must be identical.
// Bound: one generation must read and write the board once: 2 bytes per cell for the byte
// kernels, 2/8 byte for the bit-packed one; at the measured device-to-device copy rate
// (read + write) that gives the cell updates/s no kernel of that layout can beat.
// Target: bit-packed >= 2e12 cell updates/s on 16384^2.

#include "benchmarks.hpp"
#include "harness/measure.hpp"

#include "streampipe/cuda/bandwidth.hpp"
#include "streampipe/tools/life.hpp"
#include "streampipe/tools/life_universe.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <memory>
#include <optional>

namespace streampipe::bench {
namespace {

using namespace streampipe::tools::life;

constexpr double kTarget = 2e12;  // bit-packed, 16384^2
constexpr std::uint64_t kStreamGenerations = 200;
constexpr std::uint64_t kSeed = 2026;  // of the random starts

// One row per kernel and board size: the rate of each timed run in cell updates/s.
Table kernel_table(State& state, const std::vector<Kernel>& kernels, const Device& gpu, double d2d_gbps) {
  const auto density = state.get<double>("density");
  const std::uint64_t seed = kSeed;
  const auto fixed_generations = state.get<std::uint64_t>("generations");
  Table t;
  t.name = "kernels";
  t.title = fmt::format("bench life on {} (GPU {}): cell updates/s, median of {} runs after {} warm-up, events around "
                        "each run; bound = device-to-device copy {:.0f} GB/s / bytes moved per cell",
                        gpu.name(), gpu.index(), state.runs(), state.warmup(), d2d_gbps);
  t.headers = {"board", "kernel", "gens/run", "cell updates/s", "min", "max", "vs bound", "target", "ok"};
  using report::Align;
  t.align = {Align::right, Align::left, Align::right, Align::right, Align::right,
             Align::right, Align::right, Align::left, Align::left};
  EventTimer timer(gpu);
  for (const std::int64_t side : state.get<std::vector<std::int64_t>>("sizes")) {
    const auto size = static_cast<std::uint32_t>(side);
    const double cells = static_cast<double>(size) * size;
    const std::uint64_t gens =
        fixed_generations > 0 ? fixed_generations
                              : std::clamp<std::uint64_t>((std::uint64_t{1} << 34) / (std::uint64_t{size} * size), 8, 2000);
    fmt::print(stderr, "{}x{}: CPU reference for 2 generations...\n", size, size);
    const Board reference = advance_host(random_board(size, size, density, seed), 2, 0);
    std::optional<Board> first_final;
    for (const Kernel k : kernels) {
      DeviceUniverse u(gpu, size, size, k);
      u.fill_random(seed, density);  // poisons the other buffer
      u.step(2);
      const bool verified = u.download() == reference;
      u.fill_random(seed, density);
      const Samples ms = measure(state.warmup(), state.runs(), {{}, [&] { return timer.ms(u.stream(), [&] { u.step(gens); }); }, {}});
      const double bound = d2d_gbps * 1e9 / (k == Kernel::bit_packed ? 2.0 / 8.0 : 2.0);
      Board final_board = u.download();
      bool agree = true;
      if (!first_final)
        first_final = std::move(final_board);
      else
        agree = final_board == *first_final;
      Row row;
      row.name = fmt::format("{} {}^2", to_string(k), size);
      row.unit = "cell updates/s";
      row.values = per_second(ms.values, cells * static_cast<double>(gens));
      row.verified = verified && agree;
      const auto rate = row.summary();
      const bool has_target = k == Kernel::bit_packed && size == 16384;
      const bool meets = !has_target || rate.median >= kTarget;
      row.cells = {fmt::format("{}^2", size), std::string(to_string(k)), std::to_string(gens),
                   fmt::format("{:.3g}", rate.median), fmt::format("{:.3g}", rate.min), fmt::format("{:.3g}", rate.max),
                   fmt::format("{:.1f}% of {:.3g}", 100 * rate.median / bound, bound),
                   has_target ? fmt::format(">= {:.0e}", kTarget) : "", !row.verified ? "WRONG" : meets ? "yes" : "no"};
      row.fields = {{"size", size},
                    {"kernel", to_string(k)},
                    {"generations_per_run", gens},
                    {"bound_cell_updates_per_s", bound},
                    {"percent_of_bound", 100 * rate.median / bound},
                    {"verified_against_cpu", verified},
                    {"kernels_agree", agree}};
      if (has_target) row.fields["target_cell_updates_per_s"] = kTarget, row.fields["meets_target"] = meets;
      fmt::print(stderr, "  {:>9}: {:.3g} cell updates/s{}\n", to_string(k), rate.median, row.verified ? "" : "  WRONG");
      t.rows.push_back(std::move(row));
    }
  }
  return t;
}

// Many small universes: one stream each, all enqueued before any wait, against the naive
// loop that waits for each universe before starting the next; the two alternate run by run.
Table streams_table(State& state, const Device& gpu) {
  const auto density = state.get<double>("density");
  const std::uint64_t seed = kSeed;
  const int count = state.get<int>("universes");
  const auto s = state.get<std::uint32_t>("universe-size");
  std::vector<std::unique_ptr<DeviceUniverse>> us;
  for (int i = 0; i < count; ++i) {
    us.push_back(std::make_unique<DeviceUniverse>(gpu, s, s, Kernel::shared_memory));
    us.back()->fill_random(seed + static_cast<std::uint64_t>(i), density);
  }
  const Trial trials[] = {
      {[&] { for (auto& u : us) u->synchronize(); }, [&] {
         return wall_ms([&] {
           for (auto& u : us) {
             u->step(kStreamGenerations);
             u->synchronize();
           }
         });
       }, {}},
      {{}, [&] {
         return wall_ms([&] {
           for (auto& u : us) u->step(kStreamGenerations);
           for (auto& u : us) u->synchronize();
         });
       }, {}}};
  const auto samples = measure_alternating(state.warmup(), state.runs(), trials);
  // Every universe ran 2 x (warmup + runs) x 200 generations from its own random start.
  const std::uint64_t total = 2 * static_cast<std::uint64_t>(state.warmup() + state.runs()) * kStreamGenerations;
  bool verified = true;
  for (int i = 0; i < std::min(count, 2); ++i)
    verified = verified && us[static_cast<std::size_t>(i)]->download() ==
                               advance_host(random_board(s, s, density, seed + static_cast<std::uint64_t>(i)), total, 0);
  Table t;
  t.name = "universes";
  t.title = fmt::format("{} universes of {}^2 (shared kernel, {} generations), wall ms", count, s, kStreamGenerations);
  t.headers = {"variant", "ms", "min", "max", "speed-up", "ok"};
  t.fields = {{"universes", count}, {"size", s}, {"kernel", "shared"}, {"generations", kStreamGenerations}};
  const char* names[] = {"one after another", "on their own streams at once"};
  const double serial = samples[0].summary().median;
  for (std::size_t i = 0; i < 2; ++i) {
    Row row{names[i], "ms", samples[i].values, verified, false, {}, nlohmann::json::object()};
    const auto sum = row.summary();
    row.cells = {row.name, fmt::format("{:.2f}", sum.median), fmt::format("{:.2f}", sum.min), fmt::format("{:.2f}", sum.max),
                 fmt::format("{:.2f}x", serial / sum.median), verified ? "yes" : "WRONG"};
    t.rows.push_back(std::move(row));
  }
  return t;
}

void run_life(State& state) {
  std::vector<Kernel> kernels;
  for (const auto& name : state.get<std::vector<std::string>>("kernels")) {
    const auto k = parse_kernel(name);
    if (!k) throw ParameterError(fmt::format("--kernels: '{}' is not one of global, shared, bitpacked", name));
    kernels.push_back(*k);
  }
  const Device gpu(state.device());
  state.set_device(gpu.index(), gpu.name());
  const double d2d_gbps = link_limits(gpu).gbps("d2d");
  state.result().limits = {{"d2d_gbps", d2d_gbps}};
  state.result().fields = {{"density", state.get<double>("density")}};
  state.add_table(kernel_table(state, kernels, gpu, d2d_gbps));
  state.add_table(streams_table(state, gpu));
}

}  // namespace

Benchmark life_benchmark() {
  Benchmark b;
  b.name = "life";
  b.description =
      "Conway's Life kernels (global memory, shared-memory tiles, bit-packed) in cell updates/s on "
      "square boards, against the memory-traffic bound of each layout (target: bit-packed >= 2e12 on "
      "16384^2), and many small universes on their own streams against a one-by-one loop. Every "
      "kernel is checked against the CPU reference and against the other kernels.";
  b.needs_gpu = true;
  b.mismatch = "a kernel disagreed with the CPU reference or with the other kernels";
  using I = std::int64_t;
  b.parameters = {
      {"sizes", "board sides (square boards)", std::vector<I>{1024, 4096, 16384}, 1, 65536},
      {"kernels", "kernels to time", std::vector<std::string>{"global", "shared", "bitpacked"}},
      {"generations", "generations per timed run (0: about 2^34 cell updates)", I{0}, 0, static_cast<double>(I{1} << 40)},
      {"density", "live fraction of the random start", 0.3, 0.0, 1.0},
      {"universes", "universes in the streams experiment", I{16}, 1, 256},
      {"universe-size", "side of each universe in the streams experiment", I{256}, 8, 4096},
  };
  b.run = run_life;
  return b;
}

}  // namespace streampipe::bench
