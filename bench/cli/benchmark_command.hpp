// SPDX-License-Identifier: Apache-2.0
#pragma once
// A benchmark of bench/ as a subcommand of the CLI (`streampipe bench <name>`, and
// `streampipe serve-bench` for `bench serve`): its declared parameters become options (a flag
// for a bool, comma-separated lists), each declared output `--<name> FILE`, with --json
// FILE|-, --runs, --warmup, --devices, --force and --allow-special-outputs added. Bad values
// are bad usage (exit 2); the run's status is 1 when an output was not verified.

#include "commands.hpp"

#include "harness/benchmark.hpp"

#include <CLI/CLI.hpp>

#include <string>

namespace streampipe::cli {

// `benchmark` as the subcommand `name` of `parent`; `example` ends its --help after the plain
// command. The benchmark must outlive the command (catalog() entries do).
Command add_benchmark(CLI::App& parent, const bench::Benchmark& benchmark, const std::string& name,
                      const std::string& example);

}  // namespace streampipe::cli
