// SPDX-License-Identifier: Apache-2.0
// `streampipe life`: Conway's Life on a torus (tools::life::run). Random boards or pattern
// files (.rle, .cells) placed at an offset; one of three GPU kernels, several universes at
// once (each GPU's in one batch), or the host backend without a GPU. Outputs: population per
// generation (CSV or JSON), PNG snapshots (numbered frames: the animation), a live view.

#include "commands.hpp"
#include "interrupt.hpp"
#include "json_text.hpp"
#include "life_frames.hpp"
#include "life_memory.hpp"
#include "life_options.hpp"
#include "life_population_stream.hpp"
#include "memory_option.hpp"
#include "option_checks.hpp"
#include "outputs.hpp"
#include "ranks.hpp"
#include "report_option.hpp"
#include "tool_command.hpp"

#include "streampipe/tools/life/report.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <optional>
#include <unistd.h>

namespace streampipe::cli {
namespace {

int run_life(const LifeFlags& f, const ReportOptions& report_options) {
  tools::life::Options o = life_shape(f);
  if (f.snapshot_every > 0 && f.output_dir.empty())
    throw UsageError("--snapshot-every needs -o/--output-dir for the PNG frames");
  if (f.live && ::isatty(STDOUT_FILENO) == 0) throw UsageError("--live draws on a terminal; standard output is not one");
  // Refuse existing outputs before any work is done, not after.
  Outputs out(f.force, f.allow_special);
  if (!f.pattern.empty()) {
    out.input("--pattern", f.pattern);
    if (::access(f.pattern.c_str(), R_OK) != 0)
      throw UsageError(fmt::format("--pattern {}: cannot read it: {}", f.pattern, std::strerror(errno)));
  }
  if (f.live) out.claim_terminal("--live");
  out.claim("--population", f.population_path);
  out.claim("--json", f.json_path);
  out.claim("--report-json", report_options.json_path);
  const FrameSeries frames{f.output_dir, f.universes, f.generations, f.snapshot_every, f.scale, f.force};
  if (f.snapshot_every > 0)
    claim_frames(frames, out, {{"--population", f.population_path}, {"--json", f.json_path},
                               {"--report-json", report_options.json_path}});
  const mpi::Job& ranks = Ranks::get();
  if (ranks.several() && (f.live || report_options.wanted()))
    throw UsageError("--live and --report describe one process: under mpirun, the table, --population and --json "
                     "cover every rank's universes");
  // Every rank has checked the outputs before any writes a frame: another rank's new frame
  // would read as "exists".
  ranks.barrier();
  o.timed = report_options.wanted();  // before the options: a timed run's lanes differ
  complete_life_options(f, o);
  check_life_memory(o, tools::life::device_set(o),
                    {f.size, ranks.shard(static_cast<std::size_t>(f.universes)).size(), f.scale}, f.max_memory_mib);

  o.job = &ranks;
  o.every_population = !f.population_path.empty();
  // Alone, --population streams as the run goes; under mpirun rank 0 writes the gathered.
  std::optional<PopulationStream> population;
  if (o.every_population && !ranks.several())
    o.on_generation = [&](std::uint64_t g, std::span<const std::uint64_t> row) {
      if (!population) population.emplace(out, f.population_path, row.size(), o.width, o.height, f.generations);
      population->row(g, row);
    };
  o.on_snapshot = [&frames](std::size_t u, std::uint64_t g, const tools::life::Board& b) { write_snapshot(frames, u, g, b); };
  o.on_live = [fps = f.fps](std::uint64_t g, const tools::life::Board& b, std::uint64_t p) { draw_live(g, b, p, fps); };
  tools::life::Summary s;
  {
    // A first Ctrl-C ends the run between generations; after them, one ends the process.
    const interrupt::Graceful graceful;
    o.stop = graceful.token();
    s = tools::life::run(o);
  }
  if (s.interrupted && ranks.several()) return interrupt::status();  // every rank was sent the signal
  if (!s.reports) return ranks.max_over_ranks(0);  // its universes went to rank 0, which reports the job
  out.print("{}", tools::life::report_text(o, s));
  if (s.interrupted) {  // by a signal: what finished, and no machine output
    out.print("life: interrupted after {} of {} generation(s); the frames written are complete{}\n", s.generations,
              f.generations,
              f.population_path.empty() && f.json_path.empty() && report_options.json_path.empty()
                  ? ""
                  : " (no --population, --json or --report-json: they describe whole runs)");
    return interrupt::status();
  }
  if (population) population->finish();
  if (o.every_population && ranks.several())  // rank 0: every rank's, gathered
    write_populations(out, f.population_path, o, s);
  out.write(f.json_path, json_text(tools::life::report_json(o, s), 2));
  if (o.timed) emit_report(report_options, tools::life::latency_run(o, s), "life", out);
  return ranks.several() ? ranks.max_over_ranks(0) : 0;
}

Command add_life(CLI::App& parent) {
  return add_tool(parent,
                  {"life",
                   "Conway's Game of Life (B3/S23) on a torus, from a random board or a pattern file, on the GPUs "
                   "(or the CPU); writes populations, PNG frames, or draws on the terminal. See docs/life.md.",
                   "one generation of one universe: its enqueue -> the GPU finished it (compute: its kernel and "
                   "population count, between two events; no copies), or its step on the host backend"},
                  add_life_flags, run_life,
                  {"streampipe life --size 4096x4096 -g 1000", "streampipe life --live --size 80x40",
                   "streampipe life -p glider.rle --size 64x64 -g 200 --snapshot-every 10 -o frames/"});
}

}  // namespace

STREAMPIPE_COMMAND(add_life);

}  // namespace streampipe::cli
