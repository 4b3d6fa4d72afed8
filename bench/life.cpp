// SPDX-License-Identifier: Apache-2.0
// `bench life`: cell updates per second of each Life kernel on square boards (default
// 1024^2, 4096^2, 16384^2), against the memory-traffic bound of each layout; 64 universes
// of 2048^2 in one batch against one 16384^2 board (the same cells) and against the same
// universes on 64 streams; and many small universes on their own streams against the same
// universes run one by one.
//
// Verification: every kernel's first generations from the random fill (11 by default: the
// bit-packed kernel's launches of 8, 2 and 1) are compared with the CPU reference exactly,
// and after the timed runs (the same number of generations for every kernel, from the same
// start) the kernels' final boards must be identical; the batch likewise, universe by
// universe, against the CPU reference and against the same universes stepped alone.
// Bound: one launch must read and write the board once: 2 bytes per cell for the byte
// kernels, 2/8 byte per cell per K generations for the bit-packed one (K per launch); at
// the measured device-to-device copy rate that is the rate no kernel of that layout beats.
// Target: bit-packed >= 2e13 cell updates/s on 16384^2. Reference: a public bit-packed
// CUDA implementation reports 1.17e13 on an A40 (84 SMs); it is quoted, not run here.

#include "streampipe/tools/life/board.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <memory>
#include <optional>

#include "benchmarks.hpp"
#include "harness/measure.hpp"
#include "streampipe/cuda/bandwidth.hpp"
#include "streampipe/tools/life/batch.hpp"
#include "streampipe/tools/life/universe.hpp"

namespace streampipe::bench {
namespace {

using namespace streampipe::tools::life;

constexpr double kTarget = 2e13;  // bit-packed, 16384^2
constexpr double kRecord = 1.17e13;
constexpr const char* kRecordNote =
    "reference: a public bit-packed CUDA implementation reports 1.17e13 cell updates/s on an A40 (84 SMs); "
    "quoted, not run here";
constexpr double kBatchTarget = 0.9;  // batch rate per cell vs one board of the same cells
constexpr std::uint64_t kStreamGenerations = 200;
constexpr std::uint64_t kSeed = 2026;  // of the random starts

std::uint64_t generations_for(State& state, double cells) {
  const auto fixed = state.get<std::uint64_t>("generations");
  if (fixed > 0) return fixed;
  return std::clamp<std::uint64_t>(static_cast<std::uint64_t>(68719476736.0 / cells), 8, 2000);  // ~2^36 updates
}

struct Variant {
  Kernel kernel;
  unsigned launch_generations;  // bit-packed: at most this many per launch, 0: by board
};

// One row per kernel (and bit-packed launch size) and board size: cell updates/s per run.
Table kernel_table(State& state, const std::vector<Variant>& variants, const Device& gpu, double d2d_gbps) {
  const auto density = state.get<double>("density");
  const auto verify_gens = state.get<std::uint64_t>("verify-generations");
  Table t;
  t.name = "kernels";
  t.title = fmt::format(
      "bench life on {} (GPU {}): cell updates/s, median of {} runs after {} warm-up, events around "
      "each run; bound = device-to-device copy {:.0f} GB/s / bytes moved per cell update",
      gpu.name(), gpu.index(), state.runs(), state.warmup(), d2d_gbps);
  t.headers = {"board", "kernel", "gens/launch", "gens/run", "cell updates/s",
               "min",   "max",    "vs bound",    "target",   "ok"};
  using report::Align;
  t.align = {Align::right, Align::left,  Align::right, Align::right, Align::right,
             Align::right, Align::right, Align::right, Align::left,  Align::left};
  t.notes = {kRecordNote};
  t.fields = {{"record_cell_updates_per_s", kRecord}, {"record_device", "NVIDIA A40"}};
  EventTimer timer(gpu);
  for (const std::int64_t side : state.get<std::vector<std::int64_t>>("sizes")) {
    const auto size = static_cast<std::uint32_t>(side);
    const double cells = static_cast<double>(size) * size;
    const std::uint64_t gens = generations_for(state, cells);
    fmt::print(stderr, "{}x{}: CPU reference for {} generations...\n", size, size, verify_gens);
    const Board reference = advance_host(random_board(size, size, density, kSeed), verify_gens, 0);
    std::optional<Board> first_final;
    for (const Variant& v : variants) {
      DeviceUniverse u(gpu, size, size, v.kernel);
      u.set_generations_per_launch(v.launch_generations);
      const unsigned per_launch = u.generations_per_launch();
      u.fill_random(kSeed, density);  // poisons the other buffer
      u.step(verify_gens);
      const bool verified = u.download() == reference;
      u.fill_random(kSeed, density);
      const Samples ms =
          measure(state.warmup(), state.runs(), {{}, [&] { return timer.ms(u.stream(), [&] { u.step(gens); }); }, {}});
      const bool packed = v.kernel == Kernel::bit_packed;
      const double bound = d2d_gbps * 1e9 / (packed ? 2.0 / 8.0 / per_launch : 2.0);
      Board final_board = u.download();
      bool agree = true;
      if (!first_final)
        first_final = std::move(final_board);
      else
        agree = final_board == *first_final;
      const std::string name = packed && v.launch_generations != 0 ? fmt::format("bitpacked/{}", v.launch_generations)
                                                                   : std::string(to_string(v.kernel));
      Row row;
      row.name = fmt::format("{} {}^2", name, size);
      row.unit = "cell updates/s";
      row.values = per_second(ms.values, cells * static_cast<double>(gens));
      row.verified = verified && agree;
      const auto rate = row.summary();
      const bool has_target = packed && size == 16384;
      const bool meets = !has_target || rate.median >= kTarget;
      row.cells = {fmt::format("{}^2", size),
                   name,
                   std::to_string(per_launch),
                   std::to_string(gens),
                   fmt::format("{:.3g}", rate.median),
                   fmt::format("{:.3g}", rate.min),
                   fmt::format("{:.3g}", rate.max),
                   fmt::format("{:.1f}% of {:.3g}", 100 * rate.median / bound, bound),
                   has_target ? fmt::format(">= {:.0e}", kTarget) : "",
                   !row.verified ? "WRONG"
                   : meets       ? "yes"
                                 : "no"};
      row.fields = {{"size", size},
                    {"kernel", to_string(v.kernel)},
                    {"generations_per_launch", per_launch},
                    {"generations_per_run", gens},
                    {"verified_generations", verify_gens},
                    {"bound_cell_updates_per_s", bound},
                    {"percent_of_bound", 100 * rate.median / bound},
                    {"verified_against_cpu", verified},
                    {"kernels_agree", agree}};
      if (has_target) {
        row.fields["target_cell_updates_per_s"] = kTarget;
        row.fields["meets_target"] = meets;
        row.fields["vs_record"] = rate.median / kRecord;
      }
      fmt::print(stderr, "  {:>12}: {:.3g} cell updates/s{}\n", name, rate.median, row.verified ? "" : "  WRONG");
      t.rows.push_back(std::move(row));
    }
  }
  return t;
}

// 64 universes of 2048^2 stepped as one batch, the same universes as 64 DeviceUniverses on
// their own streams, and one board with as many cells; the three alternate run by run.
Table batch_table(State& state, const Device& gpu) {
  const auto density = state.get<double>("density");
  const auto verify_gens = state.get<std::uint64_t>("verify-generations");
  const auto count = state.get<std::uint32_t>("batch-universes");
  const auto size = state.get<std::uint32_t>("batch-size");
  const auto single_side = state.get<std::uint32_t>("batch-single");
  const double batch_cells = static_cast<double>(size) * size * count;
  const double single_cells = static_cast<double>(single_side) * single_side;
  const std::uint64_t gens = generations_for(state, batch_cells);

  UniverseBatch batch(gpu, size, size, count);
  // Verified first: the batch's first generations, universe by universe (two of them
  // against the CPU reference: a 2048^2 reference takes a while).
  batch.fill_random(kSeed, density);
  batch.step(verify_gens);
  bool verified = true;
  for (const std::uint32_t i : {0u, count - 1})
    verified =
        verified && batch.download(i) == advance_host(random_board(size, size, density, kSeed + i), verify_gens, 0);
  batch.fill_random(kSeed, density);
  std::vector<std::unique_ptr<DeviceUniverse>> alone;
  for (std::uint32_t i = 0; i < count; ++i) {
    alone.push_back(std::make_unique<DeviceUniverse>(gpu, size, size, Kernel::bit_packed));
    alone.back()->fill_random(kSeed + i, density);
  }
  DeviceUniverse single(gpu, single_side, single_side, Kernel::bit_packed);
  single.fill_random(kSeed, density);
  EventTimer timer(gpu);
  const Trial trials[] = {{{}, [&] { return timer.ms(single.stream(), [&] { single.step(gens); }); }, {}},
                          {{}, [&] { return timer.ms(batch.stream(), [&] { batch.step(gens); }); }, {}},
                          {{},
                           [&] {
                             return wall_ms([&] {
                               for (auto& u : alone) u->step(gens);
                               for (auto& u : alone) u->synchronize();
                             });
                           },
                           {}}};
  const auto samples = measure_alternating(state.warmup(), state.runs(), trials);
  // The batch and the lone universes ran the same generations from the same starts.
  bool agree = true;
  for (std::uint32_t i = 0; i < count; ++i) agree = agree && batch.download(i) == alone[i]->download();

  Table t;
  t.name = "batch";
  t.title = fmt::format(
      "{} universes of {}^2 in one batch (bit-packed, {} per launch) against one {}^2 board: "
      "cell updates/s, {} generations per run",
      count, size, batch.generations_per_launch(), single_side, gens);
  t.headers = {"variant", "cell updates/s", "min", "max", "per cell vs one board", "target", "ok"};
  t.fields = {{"universes", count},
              {"size", size},
              {"single_size", single_side},
              {"generations_per_run", gens},
              {"verified_generations", verify_gens}};
  const std::string names[] = {fmt::format("1 x {}^2", single_side), fmt::format("{} x {}^2, one batch", count, size),
                               fmt::format("{} x {}^2, {} streams", count, size, count)};
  const double cells[] = {single_cells, batch_cells, batch_cells};
  const double single_rate =
      report::summarize(per_second(samples[0].values, single_cells * static_cast<double>(gens))).median;
  for (std::size_t i = 0; i < 3; ++i) {
    Row row;
    row.name = names[i];
    row.unit = "cell updates/s";
    row.values = per_second(samples[i].values, cells[i] * static_cast<double>(gens));
    row.verified = i == 0 || (verified && agree);
    const auto rate = row.summary();
    const double ratio = rate.median / single_rate;
    const bool is_batch = i == 1;
    const bool meets = !is_batch || ratio >= kBatchTarget;
    row.cells = {row.name,
                 fmt::format("{:.3g}", rate.median),
                 fmt::format("{:.3g}", rate.min),
                 fmt::format("{:.3g}", rate.max),
                 fmt::format("{:.2f}x", ratio),
                 is_batch ? fmt::format(">= {:.1f}x", kBatchTarget) : "",
                 !row.verified ? "WRONG"
                 : meets       ? "yes"
                               : "no"};
    row.fields = {{"per_cell_vs_single", ratio}, {"universes", i == 0 ? 1u : count}};
    if (is_batch) {
      row.fields["target_per_cell_vs_single"] = kBatchTarget;
      row.fields["meets_target"] = meets;
    }
    t.rows.push_back(std::move(row));
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
  const Trial trials[] = {{[&] {
                             for (auto& u : us) u->synchronize();
                           },
                           [&] {
                             return wall_ms([&] {
                               for (auto& u : us) {
                                 u->step(kStreamGenerations);
                                 u->synchronize();
                               }
                             });
                           },
                           {}},
                          {{},
                           [&] {
                             return wall_ms([&] {
                               for (auto& u : us) u->step(kStreamGenerations);
                               for (auto& u : us) u->synchronize();
                             });
                           },
                           {}}};
  const auto samples = measure_alternating(state.warmup(), state.runs(), trials);
  // Every universe ran 2 x (warmup + runs) x 200 generations from its own random start.
  const std::uint64_t total = 2 * static_cast<std::uint64_t>(state.warmup() + state.runs()) * kStreamGenerations;
  bool verified = true;
  for (int i = 0; i < std::min(count, 2); ++i)
    verified =
        verified && us[static_cast<std::size_t>(i)]->download() ==
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
    row.cells = {row.name,
                 fmt::format("{:.2f}", sum.median),
                 fmt::format("{:.2f}", sum.min),
                 fmt::format("{:.2f}", sum.max),
                 fmt::format("{:.2f}x", serial / sum.median),
                 verified ? "yes" : "WRONG"};
    t.rows.push_back(std::move(row));
  }
  return t;
}

void run_life(State& state) {
  std::vector<Variant> variants;
  for (const auto& name : state.get<std::vector<std::string>>("kernels")) {
    const auto k = parse_kernel(name);
    if (!k) throw ParameterError(fmt::format("--kernels: '{}' is not one of global, shared, bitpacked", name));
    if (*k != Kernel::bit_packed) {
      variants.push_back({*k, 0});
      continue;
    }
    for (const std::int64_t g : state.get<std::vector<std::int64_t>>("launch-generations")) {
      if (g != 0 && g != 1 && g != 2 && g != 4 && g != 8)
        throw ParameterError(fmt::format("--launch-generations: {} is not 0, 1, 2, 4 or 8", g));
      variants.push_back({*k, static_cast<unsigned>(g)});
    }
  }
  const Device gpu(state.device());
  state.set_device(gpu.index(), gpu.name());
  const double d2d_gbps = link_limits(gpu).gbps("d2d");
  state.result().limits = {{"d2d_gbps", d2d_gbps}};
  state.result().fields = {{"density", state.get<double>("density")}};
  state.add_table(kernel_table(state, variants, gpu, d2d_gbps));
  if (state.get<std::int64_t>("batch-universes") > 0) state.add_table(batch_table(state, gpu));
  state.add_table(streams_table(state, gpu));
}

}  // namespace

Benchmark life_benchmark() {
  Benchmark b;
  b.name = "life";
  b.description =
      "Conway's Life kernels (global, shared-memory, bit-packed) in cell updates/s against each layout's memory "
      "bound, one board against many universes; every kernel checked. See docs/life.md.";
  b.needs_gpu = true;
  b.mismatch = "a kernel disagreed with the CPU reference or with the other kernels";
  using I = std::int64_t;
  b.parameters = {
      {"sizes", "board sides (square boards)", std::vector<I>{1024, 4096, 16384}, 1, 65536},
      {"kernels", "kernels to time", std::vector<std::string>{"global", "shared", "bitpacked"}},
      {"launch-generations", "bit-packed: at most this many generations per launch, a row each (0: by board)",
       std::vector<I>{0}, 0, 8},
      {"generations", "generations per timed run (0: about 2^36 cell updates)", I{0}, 0,
       static_cast<double>(I{1} << 40)},
      {"verify-generations", "generations compared with the CPU reference before timing", I{11}, 1, 10000},
      {"density", "live fraction of the random start", 0.3, 0.0, 1.0},
      {"batch-universes", "universes in the batch experiment (0: none)", I{64}, 0, 4096},
      {"batch-size", "side of each universe of the batch", I{2048}, 1, 65536},
      {"batch-single", "side of the one board the batch is compared with", I{16384}, 1, 65536},
      {"universes", "universes in the streams experiment", I{16}, 1, 256},
      {"universe-size", "side of each universe in the streams experiment", I{256}, 8, 4096},
  };
  b.run = run_life;
  return b;
}

}  // namespace streampipe::bench
