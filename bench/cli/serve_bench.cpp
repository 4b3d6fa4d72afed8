// SPDX-License-Identifier: Apache-2.0
// `streampipe serve-bench`: the benchmark `bench serve` (bench/serve/) under its own name,
// with the same options, tables and JSON.

#include "benchmark_command.hpp"
#include "commands.hpp"

#include "harness/benchmark.hpp"

namespace streampipe::cli {
namespace {

Command add_serve_bench(CLI::App& parent) {
  return add_benchmark(parent, bench::find("serve"), "serve-bench",
                       "streampipe serve-bench --concurrency 1,16,64,256 --json serve.json --svg serve.svg");
}

}  // namespace

STREAMPIPE_COMMAND(add_serve_bench);

}  // namespace streampipe::cli
