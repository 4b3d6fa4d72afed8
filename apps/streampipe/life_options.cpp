// SPDX-License-Identifier: Apache-2.0
#include "life_options.hpp"

#include "commands.hpp"
#include "devices_option.hpp"
#include "engine_options.hpp"
#include "memory_option.hpp"
#include "option_checks.hpp"
#include "outputs.hpp"

#include <fmt/format.h>

#include <tuple>

namespace streampipe::cli {

void add_life_flags(CLI::App& app, LifeFlags& o) {
  app.add_option("--size", o.size, "board size in cells")->capture_default_str()->type_name("WxH");
  app.add_option("-g,--generations", o.generations, "generations to run")->capture_default_str()
      ->transform(whole_number(0, std::uint64_t{1} << 40));
  app.add_option("-k,--kernel", o.kernel, "GPU kernel: global, shared or bitpacked")->capture_default_str()
      ->type_name("KERNEL");
  app.add_option("--backend", o.backend, "auto (GPU if present), gpu, or host")->capture_default_str()
      ->type_name("WHERE");
  app.add_option("-u,--universes", o.universes, "independent universes run at once (seeds seed, seed+1, ...)")
      ->capture_default_str()->transform(whole_number(1, 1024));
  const CLI::Option* density =
      app.add_option("--density", o.density, "fraction of live cells in the random fill (0 to 1)")
          ->capture_default_str()->check(finite_number())->check(CLI::Range(0.0, 1.0));
  app.parse_complete_callback([&o, density] { o.density_given = density->count() > 0; });
  app.add_option("--seed", o.seed, "random seed of the first universe (0 or more)")
      ->capture_default_str()
      ->transform(whole_number<std::uint64_t>());
  app.add_option("-p,--pattern", o.pattern, "pattern file (.rle or .cells); the background is empty unless --density is given")
      ->check(file_name());
  app.add_option("--max-cells", o.max_cells,
                  "refuse patterns whose bounding box has more cells, checked before it is read (0: no limit)")
      ->capture_default_str()
      ->transform(whole_number<std::uint64_t>());
  app.add_option("--offset", o.offset, "the pattern's top-left cell (default: centred)")->type_name("X,Y");
  app.add_option("--population", o.population_path,
                  "write the population of every generation to FILE (.csv or .json; '-': CSV on stdout)")
      ->check(file_name());
  app.add_option("--snapshot-every", o.snapshot_every, "write a PNG of every universe each K generations (animation frames)")
      ->transform(whole_number<std::uint64_t>());
  app.add_option("-o,--output-dir", o.output_dir, "write the PNG frames (life-u<U>-g<GEN>.png) into DIR")
      ->check(file_name())
      ->type_name("DIR");
  app.add_option("--scale", o.scale, "pixels per cell in the PNG frames")->capture_default_str()->transform(whole_number(1, 64));
  app.add_flag("--force", o.force, "replace existing output files");
  add_allow_special_outputs(app, o.allow_special);
  app.add_flag("--live", o.live, "draw universe 0 on the terminal after every generation");
  app.add_option("--fps", o.fps, "frames per second of --live")
      ->capture_default_str()
      ->check(finite_number())
      ->check(CLI::Range(0.1, 1000.0));
  add_devices_option(app, o.devices,
                     "GPUs the universes are dealt to (each chunk of generations to the GPU expected to finish "
                     "it first): all, or indices (e.g. 0,2); with --backend host, simulated ones");
  app.add_option("--rows-per-thread", o.rows_per_thread,
                  "bit-packed kernel: rows each warp writes (1-65536; default 0: sized so every warp fits on the GPU at once)")
      ->transform(whole_number(0, 65536));
  app.add_option("--json", o.json_path, "also write a summary as JSON to FILE ('-': standard output alone)")
      ->check(file_name());
  add_max_memory_option(app, o.max_memory_mib);
}

tools::life::Options life_shape(const LifeFlags& f) {
  tools::life::Options o;
  std::tie(o.width, o.height) = parse_pair(f.size, 'x', "--size");
  if (o.width == 0 || o.height == 0) throw UsageError(fmt::format("--size {} has no cells", f.size));
  const auto kernel = tools::life::parse_kernel(f.kernel);
  if (!kernel) throw UsageError(fmt::format("--kernel '{}' is not one of global, shared, bitpacked", f.kernel));
  o.kernel = *kernel;
  o.generations = f.generations;
  o.universes = f.universes;
  o.seed = f.seed;
  o.rows_per_thread = f.rows_per_thread;
  o.snapshot_every = f.snapshot_every;
  o.live = f.live;
  return o;
}

void complete_life_options(const LifeFlags& f, tools::life::Options& o) {
  // The run sets its own lanes; these say how many, so that the hardware queues asked for
  // before the GPUs are counted are theirs.
  o.engine.lanes = tools::life::lanes_per_gpu(o);
  o.engine = engine_options(EngineFlags{.backend = f.backend, .devices = f.devices}, o.engine);
  if (!f.pattern.empty()) {
    try {
      tools::life::PatternLimits limits;
      limits.max_cells = f.max_cells;
      limits.raise_hint = "raise --max-cells";
      o.pattern = tools::life::load_pattern(f.pattern, limits);
    } catch (const tools::life::PatternError& e) {
      throw UsageError(e.what());
    }
    const auto& cells = o.pattern->cells;
    if (cells.width > o.width || cells.height > o.height)
      throw UsageError(fmt::format("the pattern {} ({}x{}) does not fit on the {}x{} board", f.pattern, cells.width,
                                   cells.height, o.width, o.height));
    if (f.offset.empty()) {
      o.pattern_x = (o.width - cells.width) / 2;
      o.pattern_y = (o.height - cells.height) / 2;
    } else {
      std::tie(o.pattern_x, o.pattern_y) = parse_pair(f.offset, ',', "--offset");
      if (o.pattern_x >= o.width || o.pattern_y >= o.height)
        throw UsageError(fmt::format("--offset {} lies outside the {}x{} board", f.offset, o.width, o.height));
    }
  } else if (!f.offset.empty()) {
    throw UsageError("--offset places a --pattern; there is none");
  }
  // With a pattern the background is empty unless a density was asked for.
  o.density = o.pattern && !f.density_given ? 0.0 : f.density;
}

}  // namespace streampipe::cli
