// SPDX-License-Identifier: Apache-2.0
#pragma once
// Each subcommand lives in its own file and registers itself:
//   STREAMPIPE_COMMAND(add_info);          // Command add_info(CLI::App& parent)
//   STREAMPIPE_BENCHMARK(add_bench_serve); // a `streampipe bench <name>` defined here
// The benchmarks of bench/ (bench::catalog()) become `bench <name>` subcommands in bench.cpp.
// A command's run function returns the exit status: 0 success, 1 a failure in the work,
// 2 bad usage (CLI11 parse errors and UsageError map to 2 in main).

#include <CLI/CLI.hpp>

#include <functional>
#include <stdexcept>
#include <vector>

namespace streampipe::cli {

struct Command {
  CLI::App* app = nullptr;   // the subcommand, owned by its parent
  std::function<int()> run;  // called when this subcommand was selected
};

using CommandFactory = Command (*)(CLI::App& parent);

// Registries filled by static initializers in the command files (all compiled into the
// executable itself, so none is dropped by the linker). Order: alphabetical by name.
std::vector<CommandFactory>& command_registry();
std::vector<CommandFactory>& benchmark_registry();

struct Registration {
  Registration(std::vector<CommandFactory>& (*registry)(), CommandFactory f) { registry().push_back(f); }
};

// Thrown for bad usage CLI11 cannot see (conflicting values, missing files): exit 2.
struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Resolves a tool's --backend value (auto, gpu, host) and --device against this machine:
// true for the GPU. Throws UsageError for an unknown value, --backend gpu without a usable
// GPU, or a device index that does not exist.
bool resolve_gpu_backend(const std::string& backend, int device);

// Adds the options every benchmark shares (--json FILE, --runs N, --warmup N) and returns
// them; filled when the command line is parsed.
struct BenchOptions {
  std::string json_path;
  int runs = 7;
  int warmup = 2;
  int device = 0;
};
std::shared_ptr<BenchOptions> add_bench_options(CLI::App& app, int default_runs = 7);

}  // namespace streampipe::cli

#define SP_CLI_CONCAT2(a, b) a##b
#define SP_CLI_CONCAT(a, b) SP_CLI_CONCAT2(a, b)
#define STREAMPIPE_COMMAND(factory)                                                    \
  static const ::streampipe::cli::Registration SP_CLI_CONCAT(sp_command_, __LINE__)(   \
      ::streampipe::cli::command_registry, factory)
#define STREAMPIPE_BENCHMARK(factory)                                                  \
  static const ::streampipe::cli::Registration SP_CLI_CONCAT(sp_benchmark_, __LINE__)( \
      ::streampipe::cli::benchmark_registry, factory)
