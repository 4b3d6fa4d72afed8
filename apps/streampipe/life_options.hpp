// SPDX-License-Identifier: Apache-2.0
#pragma once
// `streampipe life`'s options: as given (their registration with the subcommand), and the
// library's tools::life::Options made from them: the board's size, the kernel, the pattern
// read and placed, the devices. Everything a user can get wrong is a UsageError naming the
// option, before any work.

#include "streampipe/tools/life/pattern.hpp"
#include "streampipe/tools/life/run.hpp"

#include <CLI/CLI.hpp>

#include <cstdint>
#include <string>

namespace streampipe::cli {

struct LifeFlags {
  std::string size = "256x256";
  std::uint64_t generations = 100;
  std::string kernel = "bitpacked";
  std::string backend = "auto";
  int universes = 1;
  double density = 0.25;
  bool density_given = false;
  std::uint64_t seed = 1;
  std::string pattern;
  std::uint64_t max_cells = tools::life::PatternLimits::kDefaultMaxCells;
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

// Adds every option but the --report ones to `app`, bound to `flags` (density_given is set
// when --density is given).
void add_life_flags(CLI::App& app, LifeFlags& flags);
// The size and kernel alone (checked before the outputs are claimed).
[[nodiscard]] tools::life::Options life_shape(const LifeFlags& flags);
// The rest: the pattern (read here: it must fit the board) and where the universes run
// (--backend and --devices, as every engine command reads them: engine_options.hpp).
// options.timed is set before: a timed run's lanes differ (tools::life::lanes_per_gpu).
void complete_life_options(const LifeFlags& flags, tools::life::Options& options);

}  // namespace streampipe::cli
