// SPDX-License-Identifier: Apache-2.0
#pragma once
// What `streampipe bench <name>` does once its options are parsed (benchmark_command.cpp
// fills them): every output claimed before any work, the benchmark run on the selected GPUs
// (one a rank under mpirun), its tables printed and its envelope and outputs written.

#include "harness/benchmark.hpp"

#include <functional>
#include <map>
#include <string>

namespace streampipe::cli {

struct BenchOptions {
  std::string json_path;
  int runs = 7;
  int warmup = 2;
  std::string devices = "all";
  bool force = false;
  bool allow_special = false;
  std::map<std::string, std::string, std::less<>> outputs;  // declared output -> FILE or "-"
};

// The exit status: 0 when every output was verified, 1 otherwise (or when the benchmark
// needs a GPU this machine lacks). Throws UsageError for outputs that cannot be written (or
// are refused under mpirun) and for parameter values the benchmark refuses; `command` names
// the benchmark in messages ("bench streams", "serve-bench").
int run_benchmark(const bench::Benchmark& benchmark, const std::string& command, const BenchOptions& options,
                  const bench::Values& values);

}  // namespace streampipe::cli
