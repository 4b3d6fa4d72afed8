// SPDX-License-Identifier: Apache-2.0
#pragma once
// Each subcommand lives in its own file and registers itself:
//   STREAMPIPE_COMMAND(add_info);          // Command add_info(CLI::App& parent)
// The benchmarks of bench/ (bench::catalog()) become `bench <name>` subcommands in bench.cpp.
// A command's run function returns the exit status: 0 success, 1 a failure in the work,
// 2 bad usage (CLI11 parse errors and UsageError map to 2 in main). What a command writes
// follows outputs.hpp; its --help ends with two or three examples (set_examples) and reads as
// help_format.hpp makes it.

#include <CLI/CLI.hpp>

#include <functional>
#include <initializer_list>
#include <stdexcept>
#include <string>
#include <vector>

namespace streampipe::bench {
struct Benchmark;
}

namespace streampipe::cli {

struct Command {
  CLI::App* app = nullptr;   // the subcommand, owned by its parent
  std::function<int()> run;  // called when this subcommand was selected
};

using CommandFactory = Command (*)(CLI::App& parent);

// The registry filled by static initializers in the command files (all compiled into the
// executable itself, so none is dropped by the linker), in the order the files are linked.
std::vector<CommandFactory>& command_registry();

struct Registration {
  Registration(std::vector<CommandFactory>& (*registry)(), CommandFactory f) { registry().push_back(f); }
};

// Thrown for bad usage CLI11 cannot see (conflicting values, missing files): exit 2.
struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Resolves a tool's --backend value (auto, gpu, host) against this machine: true for the
// GPU. Throws UsageError for an unknown value or --backend gpu without a usable GPU.
bool resolve_backend(const std::string& backend);

// Ends `app`'s --help with an "Examples:" section, a command line a line (two or three: the
// common case first).
void set_examples(CLI::App& app, std::initializer_list<std::string> command_lines);

// `benchmark` as the subcommand `name` of `parent`: its declared parameters and outputs as
// options, with --json FILE|-, --runs, --warmup, --device and --force (bench.cpp); `example`
// ends its --help after the plain command.
Command add_benchmark(CLI::App& parent, const bench::Benchmark& benchmark, const std::string& name,
                      const std::string& example);

}  // namespace streampipe::cli

#define SP_CLI_CONCAT2(a, b) a##b
#define SP_CLI_CONCAT(a, b) SP_CLI_CONCAT2(a, b)
#define STREAMPIPE_COMMAND(factory)                                                    \
  static const ::streampipe::cli::Registration SP_CLI_CONCAT(sp_command_, __LINE__)(   \
      ::streampipe::cli::command_registry, factory)
