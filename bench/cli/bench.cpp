// SPDX-License-Identifier: Apache-2.0
// `streampipe bench <name>`: the benchmarks of bench/ (their declared parameters and outputs
// become options, benchmark_command.hpp), printed as tables and written as JSON. Every output
// is verified; exit 1 when one was wrong.

#include "benchmark_command.hpp"
#include "commands.hpp"

#include "harness/benchmark.hpp"

#include <fmt/format.h>

#include <memory>
#include <vector>

namespace streampipe::cli {
namespace {

Command add_bench(CLI::App& parent) {
  auto* sub = parent.add_subcommand(
      "bench", "Benchmarks, each beside the code a user would write instead; every output is verified.");
  sub->require_subcommand(1);
  set_examples(*sub, {"streampipe bench streams", "streampipe bench gray --json gray.json"});
  auto experiments = std::make_shared<std::vector<Command>>();
  for (const auto& b : bench::catalog())
    experiments->push_back(
        add_benchmark(*sub, b, b.name, fmt::format("streampipe bench {} --runs 5 --json {}.json", b.name, b.name)));
  return {sub, [experiments] {
            for (const auto& e : *experiments)
              if (e.app->parsed()) return e.run();
            return 2;
          }};
}

}  // namespace

STREAMPIPE_COMMAND(add_bench);

}  // namespace streampipe::cli
