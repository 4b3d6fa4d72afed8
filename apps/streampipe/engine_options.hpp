// SPDX-License-Identifier: Apache-2.0
#pragma once
// The engine's options on a command line, added to a command by one helper: --backend,
// --devices, --lanes, --cpu-lanes, --threads and --depth, their defaults and help read from
// the pipeline::EngineOptions the command starts from, and turned back into one.
//   --backend auto   the CPU and every GPU (the CPU works while the GPUs start)
//   --backend gpu    the GPUs alone; host: the CPU alone
//   --devices 0,2    those GPUs, in that order; with --backend host, simulated GPUs (tests)
// Under mpirun each rank takes its node-local GPU among those selected.

#include <CLI/CLI.hpp>

#include "streampipe/pipeline/engine.hpp"

#include <string>

namespace streampipe::cli {

struct EngineFlags {
  std::string backend = "auto";
  std::string devices = "all";
  int lanes = 0;
  int cpu_lanes = 0;
  int threads = 0;
  int depth = 0;
};

// Adds the options to `app`, their defaults shown from `defaults`; `spread` says how the
// command spreads its work over the devices.
void add_engine_options(CLI::App& app, EngineFlags& flags, const pipeline::EngineOptions& defaults,
                        const std::string& spread);

// `base` with what the flags set. Named GPUs are checked against the machine (exit 2 for
// one that is not there, or --backend gpu without a GPU); "all" leaves the search to the
// engine. Throws UsageError.
[[nodiscard]] pipeline::EngineOptions engine_options(const EngineFlags& flags, pipeline::EngineOptions base);

}  // namespace streampipe::cli
