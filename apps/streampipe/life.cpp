// SPDX-License-Identifier: Apache-2.0
// `streampipe life`: Conway's Life on a torus. Random boards or pattern files (.rle,
// .cells) placed at an offset; one of three GPU kernels, several universes at once (each
// GPU's in one batch), or the host backend without a GPU. Outputs: population per
// generation (CSV or JSON), PNG snapshots (numbered frames: the animation), a live view.

#include "commands.hpp"
#include "devices_option.hpp"
#include "interrupt.hpp"
#include "json_text.hpp"
#include "life_frames.hpp"
#include "life_population.hpp"
#include "life_population_stream.hpp"
#include "life_memory.hpp"
#include "memory_option.hpp"
#include "life_ranks.hpp"
#include "option_checks.hpp"
#include "outputs.hpp"
#include "ranks.hpp"
#include "report_option.hpp"

#include "streampipe/cuda/device.hpp"
#include "streampipe/report/json_schema.hpp"
#include "streampipe/io/image.hpp"
#include "streampipe/report/host_info.hpp"
#include "streampipe/report/table.hpp"
#include "streampipe/tools/life/board.hpp"
#include "streampipe/tools/life/dealt.hpp"
#include "streampipe/tools/life/image.hpp"
#include "streampipe/tools/life/pattern.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <cstdio>
#include <optional>
#include <stdexcept>
#include <sys/ioctl.h>
#include <thread>
#include <unistd.h>

namespace streampipe::cli {
namespace {

using namespace streampipe::tools::life;

struct LifeOptions {
  std::string size = "256x256";
  std::uint64_t generations = 100;
  std::string kernel = "bitpacked";
  std::string backend = "auto";
  int universes = 1;
  double density = 0.25;
  bool density_given = false;
  std::uint64_t seed = 1;
  std::string pattern;
  std::uint64_t max_cells = PatternLimits::kDefaultMaxCells;
  std::string offset;
  std::string population_path;
  std::uint64_t snapshot_every = 0;
  std::string output_dir;
  unsigned scale = 1;
  bool force = false;
  bool allow_special = false;
  bool live = false;
  double fps = 20;
  std::string devices = "all";
  unsigned rows_per_thread = 0;
  std::string json_path;
  std::uint64_t max_memory_mib = 0;
};

struct Universe {
  Board host;                               // host backend, or the last downloaded state
  PopulationLog populations;
  int runs_on = -1;                         // the GPU (or simulated device) it is dealt to
};

unsigned terminal_columns(unsigned& lines) {
  winsize ws{};
  if (::ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0) {
    lines = ws.ws_row > 2 ? ws.ws_row - 2u : 1u;
    return ws.ws_col;
  }
  lines = 24;
  return 80;
}

int run_life(const LifeOptions& o, const ReportOptions& report_options) {
  const auto [width, height] = parse_pair(o.size, 'x', "--size");
  if (width == 0 || height == 0) throw UsageError(fmt::format("--size {} has no cells", o.size));
  const auto kernel = parse_kernel(o.kernel);
  if (!kernel) throw UsageError(fmt::format("--kernel '{}' is not one of global, shared, bitpacked", o.kernel));
  if (o.snapshot_every > 0 && o.output_dir.empty())
    throw UsageError("--snapshot-every needs -o/--output-dir for the PNG frames");
  if (o.live && ::isatty(STDOUT_FILENO) == 0)
    throw UsageError("--live draws on a terminal; standard output is not one");

  // Refuse existing outputs before any work is done, not after.
  Outputs out(o.force, o.allow_special);
  if (!o.pattern.empty()) {
    out.input("--pattern", o.pattern);
    if (::access(o.pattern.c_str(), R_OK) != 0)
      throw UsageError(fmt::format("--pattern {}: cannot read it: {}", o.pattern, std::strerror(errno)));
  }
  if (o.live) out.claim_terminal("--live");
  out.claim("--population", o.population_path);
  out.claim("--json", o.json_path);
  out.claim("--report-json", report_options.json_path);
  const FrameSeries frames{o.output_dir, o.universes, o.generations, o.snapshot_every, o.scale, o.force};
  if (o.snapshot_every > 0)
    claim_frames(frames, out, {{"--population", o.population_path}, {"--json", o.json_path},
                               {"--report-json", report_options.json_path}});

  const DeviceChoice choice = resolve_gpu_devices(o.backend, o.devices);
  const bool use_gpu = choice.gpu();
  const Ranks& ranks = Ranks::get();
  if (ranks.several() && (o.live || report_options.wanted()))
    throw UsageError("--live and --report describe one process: under mpirun, the table, --population and --json "
                     "cover every rank's universes");
  // Under mpirun this rank's universes; alone, all of them.
  const auto share = report::shard_range(static_cast<std::size_t>(o.universes), ranks.info().rank, ranks.info().size);
  // Every rank has checked the outputs before any writes a frame: another rank's new frame
  // would read as "exists".
  ranks.barrier();

  std::optional<Pattern> pattern;
  std::uint32_t ox = 0, oy = 0;
  if (!o.pattern.empty()) {
    try {
      PatternLimits limits;
      limits.max_cells = o.max_cells;
      limits.raise_hint = "raise --max-cells";
      pattern = load_pattern(o.pattern, limits);
    } catch (const PatternError& e) {
      throw UsageError(e.what());
    }
    if (pattern->cells.width > width || pattern->cells.height > height)
      throw UsageError(fmt::format("the pattern {} ({}x{}) does not fit on the {}x{} board", o.pattern,
                                   pattern->cells.width, pattern->cells.height, width, height));
    if (o.offset.empty()) {
      ox = (width - pattern->cells.width) / 2;
      oy = (height - pattern->cells.height) / 2;
    } else {
      std::tie(ox, oy) = parse_pair(o.offset, ',', "--offset");
      if (ox >= width || oy >= height)
        throw UsageError(fmt::format("--offset {} lies outside the {}x{} board", o.offset, width, height));
    }
  } else if (!o.offset.empty()) {
    throw UsageError("--offset places a --pattern; there is none");
  }
  // With a pattern the background is empty unless a density was asked for.
  const double density = pattern && !o.density_given ? 0.0 : o.density;
  check_life_memory({o.size, width, height, share.end - share.begin, use_gpu,
                     pattern.has_value() || o.snapshot_every > 0 || o.live, o.snapshot_every, o.scale},
                    o.max_memory_mib);

  std::vector<Device> gpus;
  std::vector<int> dealt_to = choice.devices;  // a rank under mpirun: its node-local GPU alone
  if (ranks.several() && use_gpu)
    dealt_to = {choice.devices[static_cast<std::size_t>(
        report::local_device(ranks.info().local_rank, static_cast<int>(choice.devices.size())))]};
  for (const int index : use_gpu ? dealt_to : std::vector<int>{}) gpus.emplace_back(index);
  // Universe i runs on devices[i % n]: universes are all the same size and step the same
  // generations, so dealing them out in turn balances the GPUs without measuring them.
  // Seeds and frame names follow a universe's place in the whole job (share.begin + k).
  std::vector<Universe> universes;
  // Under mpirun rank 0 writes --population from every rank's, gathered; alone it streams.
  const bool keep_populations = !o.population_path.empty() && ranks.several();
  for (std::size_t i = share.begin; i < share.end; ++i)
    universes.push_back({Board{}, PopulationLog(keep_populations),
                         dealt_to.empty() ? (ranks.several() ? ranks.info().rank : -1) : dealt_to[i % dealt_to.size()]});
  // --report times one generation of one universe: that needs a stream per universe.
  const bool timed = report_options.wanted();
  const Layout layout = *kernel == Kernel::bit_packed && !timed ? Layout::batched : Layout::stream_each;
  std::optional<DealtUniverses> on_gpus;
  if (use_gpu && !universes.empty()) {
    on_gpus.emplace(gpus, width, height, static_cast<std::uint32_t>(universes.size()), *kernel, layout);
    if (o.rows_per_thread != 0 && *kernel == Kernel::bit_packed) on_gpus->set_rows_per_thread(o.rows_per_thread);
  }
  for (std::size_t k = 0; k < universes.size(); ++k) {
    auto& u = universes[k];
    const std::size_t i = share.begin + k;
    const std::uint64_t seed = o.seed + i;
    const bool need_host_board = !use_gpu || pattern.has_value();
    if (need_host_board) {
      u.host = random_board(width, height, density, seed);  // the size and density are checked
      if (pattern) place(u.host, *pattern, ox, oy);
    }
    if (on_gpus) {
      const auto index = static_cast<std::uint32_t>(k);
      if (need_host_board)
        on_gpus->upload(index, u.host);
      else
        on_gpus->fill_random(index, seed, density);
      u.populations.add(on_gpus->population(index));
      if (o.snapshot_every > 0 || o.live) u.host = on_gpus->download(index);
    } else {
      u.populations.add(u.host.population());
    }
    if (o.snapshot_every > 0) write_snapshot(frames, i, 0, u.host);
  }
  std::optional<PopulationStream> population;
  std::vector<std::uint64_t> generation_row(universes.size());
  if (!o.population_path.empty() && !ranks.several()) {
    population.emplace(out, o.population_path, universes.size(), width, height, o.generations);
    for (std::size_t k = 0; k < universes.size(); ++k) generation_row[k] = universes[k].populations.last();
    population->row(0, generation_row);
  }

  // Generations run in chunks that end where a snapshot or a live frame is due. On the GPU
  // a chunk is also bounded, so that the device's population log stays small and a stop is
  // taken soon: it starts at 16 generations and doubles while one takes under 100 ms.
  const std::uint64_t chunk = o.live ? 1 : (o.snapshot_every > 0 ? o.snapshot_every : o.generations);
  std::uint64_t gpu_chunk = 16;
  std::uint64_t gpu_chunk_max = 65536;
  // --report: one query per generation of each universe. On the GPU each holds an event pair
  // until its chunk ends, so chunks are bounded (one stream synchronization per chunk).
  if (timed && on_gpus) {
    gpu_chunk_max = std::max<std::uint64_t>(1, 65536 / std::max<std::size_t>(1, universes.size()));
    on_gpus->time_steps(true);
  }
  std::vector<report::QueryRecord> queries;
  const auto t0 = std::chrono::steady_clock::now();
  const double origin_ms = std::chrono::duration<double, std::milli>(t0.time_since_epoch()).count();
  const auto since_t0 = [t0] {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  };
  double output_ms = 0;
  Board scratch;
  // Asked once: step_host would ask the system for every generation (0 threads).
  const unsigned host_threads = std::max(1u, std::thread::hardware_concurrency());
  // A first Ctrl-C ends the run between generations; after them, one ends the process.
  std::optional<interrupt::Graceful> graceful(std::in_place);
  const std::stop_token stop = graceful->token();
  std::uint64_t done = 0;
  while (done < o.generations && !stop.stop_requested()) {
    std::uint64_t n = std::min(chunk, o.generations - done);
    if (o.snapshot_every > 0) n = std::min(n, o.snapshot_every - done % o.snapshot_every);  // bounded chunks
    if (on_gpus) {
      n = std::min(n, gpu_chunk);
      const auto t_chunk = std::chrono::steady_clock::now();
      // Every GPU's chunk is enqueued before any is waited for: all of them busy at once.
      on_gpus->step(n);
      auto logs = on_gpus->populations();
      std::vector<std::vector<DeviceUniverse::StepTiming>> timings;
      if (timed) timings = on_gpus->step_timings();
      if (population)
        for (std::size_t j = 0; j < n; ++j) {
          for (std::size_t k = 0; k < universes.size(); ++k) generation_row[k] = logs[k][j];
          population->row(done + j + 1, generation_row);
        }
      for (std::size_t k = 0; k < universes.size(); ++k) {
        universes[k].populations.add(logs[k]);
        if (timed)
          for (const auto& t : timings[k]) {
            report::QueryRecord q;
            q.submit_ms = q.enqueue_begin_ms = t.enqueue_begin_ms - origin_ms;
            q.enqueue_end_ms = t.enqueue_end_ms - origin_ms;
            q.complete_ms = t.done_ms - origin_ms;
            q.compute_ms = t.compute_ms;
            queries.push_back(q);
          }
      }
      if (std::chrono::steady_clock::now() - t_chunk < std::chrono::milliseconds(100))
        gpu_chunk = std::min(2 * gpu_chunk, gpu_chunk_max);
    } else {
      // Generation by generation over every universe, so that a stop finds them all at one.
      std::uint64_t g = 0;
      for (; g < n && !stop.stop_requested(); ++g) {
        for (std::size_t k = 0; k < universes.size(); ++k) {
          auto& u = universes[k];
          const double begin = timed ? since_t0() : 0.0;
          step_host(u.host, scratch, host_threads);
          std::swap(u.host, scratch);
          u.populations.add(u.host.population());
          generation_row[k] = u.populations.last();
          if (timed) queries.push_back({begin, begin, begin, since_t0(), {}, {}, {}, 1, 1});
        }
        if (population) population->row(done + g + 1, generation_row);
      }
      n = g;
    }
    if (n == 0) break;
    done += n;
    const auto t_out = std::chrono::steady_clock::now();
    const bool snapshot = o.snapshot_every > 0 && done % o.snapshot_every == 0;
    if (snapshot || o.live)
      for (std::size_t k = 0; k < universes.size(); ++k) {
        auto& u = universes[k];
        if (on_gpus && (snapshot || k == 0)) u.host = on_gpus->download(static_cast<std::uint32_t>(k));
        if (snapshot) write_snapshot(frames, share.begin + k, done, u.host);
      }
    if (o.live) {
      unsigned lines = 0;
      const unsigned cols = terminal_columns(lines);
      fmt::print("\x1b[H\x1b[2J{}generation {} population {}\n", render_text(universes[0].host, cols, lines), done,
                 universes[0].populations.last());
      std::fflush(stdout);
      std::this_thread::sleep_for(std::chrono::duration<double>(1.0 / o.fps));
    }
    output_ms += std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t_out).count();
  }
  graceful.reset();
  const bool interrupted = stop.stop_requested();
  const double wall_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  double compute_ms = std::max(wall_ms - output_ms, 1e-6);

  std::vector<std::string> gpu_names;
  std::string device_names;  // what --json and --report call the device: its name, or the names
  for (const auto& gpu : gpus) {
    gpu_names.push_back(fmt::format("{} ({})", gpu.index(), gpu.name()));
    device_names += (device_names.empty() ? "" : ", ") + gpu.name();
  }
  std::string where = "host backend (CPU reference)";
  if (use_gpu)
    where = fmt::format("{}, {} kernel{}",
                        gpus.size() == 1 ? "GPU " + gpu_names[0]
                                         : fmt::format("{} GPUs: {}", gpus.size(), fmt::join(gpu_names, ", ")),
                        to_string(*kernel), layout == Layout::batched ? ", one batch per GPU" : "");
  else if (choice.simulated)
    where += fmt::format(", universes dealt to {} simulated device(s)", choice.devices.size());
  if (interrupted && ranks.several()) return interrupt::status();  // every rank was sent the signal
  std::vector<UniverseOutcome> results;  // every universe of the job, in order
  for (auto& u : universes) results.push_back({u.runs_on, std::move(u.populations)});
  if (ranks.several()) {
    std::optional<JobLife> job = gather_life(ranks, results, compute_ms, output_ms, where);
    if (!job) return ranks.job_status(0);  // its universes went to rank 0, which reports the job
    results = std::move(job->universes);
    compute_ms = job->stepping_ms;
    output_ms = job->output_ms;
    where = job->where;
  }
  const double updates =
      static_cast<double>(width) * height * static_cast<double>(done) * static_cast<double>(results.size());
  // Which GPU ran each universe, when there is a choice.
  const bool show_device = choice.devices.size() > 1 || choice.simulated || ranks.several();
  std::vector<std::string> columns{"universe"};
  if (show_device) columns.push_back(use_gpu ? "GPU" : (ranks.several() ? "rank" : "simulated device"));
  for (const char* c : {"start", "final", "min", "max"}) columns.emplace_back(c);
  report::Table table(columns, std::vector<report::Align>(columns.size(), report::Align::right));
  for (std::size_t i = 0; i < results.size(); ++i) {
    const auto& p = results[i].populations;
    std::vector<std::string> row{std::to_string(i)};
    if (show_device) row.push_back(std::to_string(results[i].runs_on));
    for (const auto v : {p.first(), p.last(), p.min(), p.max()}) row.push_back(std::to_string(v));
    table.add_row(row);
  }
  out.print("{}", table.str(fmt::format("life {}x{}, {} generation(s), {} universe(s) on {}", width, height, done,
                                        results.size(), where)));
  out.print("{:.1f} ms stepping ({:.3g} cell updates/s), {:.1f} ms writing output\n", compute_ms,
            updates / (compute_ms / 1e3), output_ms);
  if (interrupted) {  // by a signal: what finished, and no machine output
    out.print("life: interrupted after {} of {} generation(s); the frames written are complete{}\n", done,
              o.generations,
              o.population_path.empty() && o.json_path.empty() && report_options.json_path.empty()
                  ? ""
                  : " (no --population, --json or --report-json: they describe whole runs)");
    return interrupt::status();
  }

  if (population) population->finish();
  if (!o.population_path.empty() && ranks.several()) {  // rank 0: every rank's, gathered
    PopulationStream gathered(out, o.population_path, results.size(), width, height, o.generations);
    generation_row.resize(results.size());
    for (std::uint64_t g = 0; g <= o.generations; ++g) {
      for (std::size_t k = 0; k < results.size(); ++k) generation_row[k] = results[k].populations.all()[g];
      gathered.row(g, generation_row);
    }
    gathered.finish();
  }
  if (!o.json_path.empty()) {
    nlohmann::json j = {{"tool", "life"},
                        {"width", width},
                        {"height", height},
                        {"generations", o.generations},
                        {"universes", results.size()},
                        {"backend", use_gpu ? "gpu" : "host"},
                        {"kernel", use_gpu ? std::string(to_string(*kernel)) : "host"},
                        {"layout", !use_gpu ? "host" : layout == Layout::batched ? "batched" : "stream_each"},
                        {"device", use_gpu ? device_names : std::string("none")},
                        {"devices", nlohmann::json::array()},
                        {"universe_devices", nlohmann::json::array()},
                        {"host", report::describe_host()},
                        {"stepping_ms", compute_ms},
                        {"output_ms", output_ms},
                        {"cell_updates_per_s", updates / (compute_ms / 1e3)},
                        {"final_populations", nlohmann::json::array()}};
    for (const auto& u : results) j["final_populations"].push_back(u.populations.last());
    for (const auto& gpu : gpus) j["devices"].push_back({{"index", gpu.index()}, {"name", gpu.name()}});
    if (choice.simulated)
      for (const int d : choice.devices) j["devices"].push_back({{"index", d}, {"name", "simulated"}});
    if (!choice.devices.empty())
      for (const auto& u : results) j["universe_devices"].push_back(u.runs_on);
    out.write(o.json_path, json_text(report::stamped(std::move(j), "life"), 2));
  }
  if (timed) {
    report::LatencyRun run;
    run.name = fmt::format("life {}x{}, {} universe(s) on {}; query = one generation of one universe", width,
                           height, results.size(), where);
    run.device = use_gpu ? device_names : std::string("host");
    // The GPU path waits in cudaStreamSynchronize (spins under the default scheduling); the
    // host backend computes in the calling thread and never waits.
    run.sync = use_gpu ? report::SyncMode::spin : report::SyncMode::blocking;
    run.limits.iteration_limit = static_cast<std::size_t>(o.generations) * results.size();
    run.wall_ms = compute_ms;
    run.queries = std::move(queries);
    emit_report(report_options, run, "life", out);
  }
  return ranks.several() ? ranks.job_status(0) : 0;
}

Command add_life(CLI::App& parent) {
  auto* sub = parent.add_subcommand(
      "life",
      "Conway's Game of Life (B3/S23) on a torus, from a random board or a pattern file, on the GPUs (or the "
      "CPU); writes populations, PNG frames, or draws on the terminal. See docs/life.md.");
  auto o = std::make_shared<LifeOptions>();
  sub->add_option("--size", o->size, "board size in cells")->capture_default_str()->type_name("WxH");
  sub->add_option("-g,--generations", o->generations, "generations to run")->capture_default_str()
      ->transform(whole_number(0, std::uint64_t{1} << 40));
  sub->add_option("-k,--kernel", o->kernel, "GPU kernel: global, shared or bitpacked")->capture_default_str()
      ->type_name("KERNEL");
  sub->add_option("--backend", o->backend, "auto (GPU if present), gpu, or host")->capture_default_str()
      ->type_name("WHERE");
  sub->add_option("-u,--universes", o->universes, "independent universes run at once (seeds seed, seed+1, ...)")
      ->capture_default_str()->transform(whole_number(1, 1024));
  auto* density = sub->add_option("--density", o->density, "fraction of live cells in the random fill (0 to 1)")
      ->capture_default_str()->check(finite_number())->check(CLI::Range(0.0, 1.0));
  sub->add_option("--seed", o->seed, "random seed of the first universe (0 or more)")
      ->capture_default_str()
      ->transform(whole_number<std::uint64_t>());
  sub->add_option("-p,--pattern", o->pattern, "pattern file (.rle or .cells); the background is empty unless --density is given")
      ->check(file_name());
  sub->add_option("--max-cells", o->max_cells,
                  "refuse patterns whose bounding box has more cells, checked before it is read (0: no limit)")
      ->capture_default_str()
      ->transform(whole_number<std::uint64_t>());
  sub->add_option("--offset", o->offset, "the pattern's top-left cell (default: centred)")->type_name("X,Y");
  sub->add_option("--population", o->population_path,
                  "write the population of every generation to FILE (.csv or .json; '-': CSV on stdout)")
      ->check(file_name());
  sub->add_option("--snapshot-every", o->snapshot_every, "write a PNG of every universe each K generations (animation frames)")
      ->transform(whole_number<std::uint64_t>());
  sub->add_option("-o,--output-dir", o->output_dir, "write the PNG frames (life-u<U>-g<GEN>.png) into DIR")
      ->check(file_name())
      ->type_name("DIR");
  sub->add_option("--scale", o->scale, "pixels per cell in the PNG frames")->capture_default_str()->transform(whole_number(1, 64));
  sub->add_flag("--force", o->force, "replace existing output files");
  add_allow_special_outputs(*sub, o->allow_special);
  sub->add_flag("--live", o->live, "draw universe 0 on the terminal after every generation");
  sub->add_option("--fps", o->fps, "frames per second of --live")
      ->capture_default_str()
      ->check(finite_number())
      ->check(CLI::Range(0.1, 1000.0));
  add_devices_option(*sub, o->devices,
                     "GPUs to deal the universes out to, in turn: all, or indices (e.g. 0,2); with --backend "
                     "host, simulated ones");
  sub->add_option("--rows-per-thread", o->rows_per_thread,
                  "bit-packed kernel: rows each warp writes (1-65536; default 0: sized so every warp fits on the GPU at once)")
      ->transform(whole_number(0, 65536));
  sub->add_option("--json", o->json_path, "also write a summary as JSON to FILE ('-': standard output alone)")
      ->check(file_name());
  add_max_memory_option(*sub, o->max_memory_mib);
  auto report = add_report_options(*sub, "one generation of one universe: its enqueue -> the GPU finished it "
                                           "(compute: its kernel and population count, between two events; no "
                                           "copies), or its step on the host backend");
  set_examples(*sub, {"streampipe life --size 4096x4096 -g 1000", "streampipe life --live --size 80x40",
                      "streampipe life -p glider.rle --size 64x64 -g 200 --snapshot-every 10 -o frames/"});
  return {sub, [o, density, report] {
            o->density_given = density->count() > 0;
            return run_life(*o, *report);
          }};
}

}  // namespace

STREAMPIPE_COMMAND(add_life);

}  // namespace streampipe::cli
