// SPDX-License-Identifier: Apache-2.0
// `streampipe bench <experiment>`: the classic experiments, each verified against a CPU
// reference, printed as a table and written as JSON. Experiments register themselves with
// STREAMPIPE_BENCHMARK in their own files.

#include "commands.hpp"

#include <memory>

namespace streampipe::cli {

std::vector<CommandFactory>& benchmark_registry() {
  static std::vector<CommandFactory> registry;
  return registry;
}

std::shared_ptr<BenchOptions> add_bench_options(CLI::App& app, int default_runs) {
  auto o = std::make_shared<BenchOptions>();
  o->runs = default_runs;
  app.add_option("--json", o->json_path, "also write the results as JSON to FILE");
  app.add_option("--runs", o->runs, "timed runs per row (the median is reported, with min and max)")
      ->capture_default_str()->check(CLI::Range(1, 1000));
  app.add_option("--warmup", o->warmup, "untimed runs first (module load, pool growth)")
      ->capture_default_str()->check(CLI::Range(0, 100));
  app.add_option("-d,--device", o->device, "GPU index")->capture_default_str()->check(CLI::NonNegativeNumber);
  return o;
}

namespace {

Command add_bench(CLI::App& parent) {
  auto* sub = parent.add_subcommand(
      "bench", "Run benchmark experiments side by side with the peers a user would write "
               "instead; every output is verified, figures are medians with min/max.");
  sub->require_subcommand(1);
  auto experiments = std::make_shared<std::vector<Command>>();
  for (const CommandFactory factory : benchmark_registry()) experiments->push_back(factory(*sub));
  return {sub, [experiments] {
            for (const auto& e : *experiments)
              if (e.app->parsed()) return e.run();
            return 2;
          }};
}

}  // namespace

STREAMPIPE_COMMAND(add_bench);

}  // namespace streampipe::cli
