// SPDX-License-Identifier: Apache-2.0
#include "benchmark_run.hpp"

#include "commands.hpp"
#include "devices_option.hpp"
#include "json_text.hpp"
#include "outputs.hpp"
#include "ranks.hpp"

#include "streampipe/cuda/device.hpp"
#include "streampipe/mpi/gather.hpp"
#include "streampipe/report/json_schema.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <cstddef>
#include <string>
#include <vector>

namespace streampipe::cli {
namespace {

// Under mpirun every rank ran the benchmark on its own GPU at once: rank 0 prints each
// rank's tables and writes one --json holding every rank's envelope; the job's status is 1
// when any rank's outputs did not match. Collective.
int finish_bench_ranks(const mpi::Job& ranks, const std::string& name, const bench::Benchmark& b,
                       const bench::Result& result, const std::string& printed, const std::string& json_path,
                       Outputs& out) {
  const nlohmann::json mine = {{"rank", ranks.info().rank},
                               {"host", ranks.host()},
                               {"printed", printed},
                               {"envelope", bench::envelope(result, bench::command_line())}};
  auto parts = mpi::gather_parts(ranks, mine);
  const int status = ranks.max_over_ranks(result.verified() ? 0 : 1);
  if (!result.verified()) fmt::print(stderr, "{}{}: {}\n", name, Ranks::tag(), b.mismatch);
  if (!parts) return status;
  nlohmann::json merged = {{"benchmark", name}, {"ranks", nlohmann::json::array()}};
  for (auto& rank_part : *parts) {
    nlohmann::json& j = rank_part.meta;
    out.print("=== rank {} on {} ===\n{}\n", j.at("rank").get<int>(), j.at("host").get<std::string>(),
              j.at("printed").get<std::string>());
    merged["ranks"].push_back({{"rank", j.at("rank")}, {"host", j.at("host")}, {"result", std::move(j.at("envelope"))}});
  }
  out.write(json_path, json_text(report::stamped(std::move(merged), "bench.ranks"), 2));
  return status;
}

}  // namespace

int run_benchmark(const bench::Benchmark& b, const std::string& name, const BenchOptions& o,
                  const bench::Values& values) {
  Outputs out(o.force, o.allow_special);
  out.claim("--json", o.json_path);
  // Without a GPU nothing is selected: the benchmarks run their host rows.
  std::vector<int> devices = select_gpus(o.devices);
  if (devices.empty()) devices = {0};
  const mpi::Job& ranks = Ranks::get();
  if (ranks.several()) {
    bool writes_files = b.files && !b.files(values).empty();
    for (const auto& [output, path] : o.outputs) writes_files = writes_files || !path.empty();
    if (writes_files)
      throw UsageError("under mpirun a benchmark writes one --json for every rank; its other outputs describe one "
                       "process");
    // One rank per GPU: the node-local rank's GPU among those --devices selected.
    devices = {devices[static_cast<std::size_t>(
        mpi::local_device(ranks.info().local_rank, static_cast<int>(devices.size())))]};
  }
  bench::Settings settings{o.runs, o.warmup, devices.front(), devices, o.force, {}};
  for (const auto& [output, path] : o.outputs) {
    out.claim("--" + output, path);
    if (!path.empty()) settings.outputs.insert(output);
  }
  if (b.files)
    for (const auto& f : b.files(values)) out.claim_regular(f.option, f.path);  // written by the benchmark
  if (b.needs_gpu && Device::count() == 0) {
    fmt::print(stderr, "{} needs a CUDA device: {}\n", name, Device::unavailable_reason().value_or("?"));
    return 1;
  }
  bench::Result result;
  std::string printed;  // under mpirun, this rank's tables, which rank 0 prints
  try {
    result = bench::run(b, settings, values, [&](const std::string& text) {
      if (ranks.several())
        printed += text;
      else
        out.print("{}", text);
    });
  } catch (const bench::ParameterError& e) {
    throw UsageError(e.what());
  }
  if (ranks.several()) return finish_bench_ranks(ranks, name, b, result, printed, o.json_path, out);
  out.write(o.json_path, json_text(bench::envelope(result, bench::command_line()), 2));
  for (const auto& [output, path] : o.outputs)
    if (const auto it = result.outputs.find(output); it != result.outputs.end()) out.write(path, it->second);
  if (result.verified()) return 0;
  fmt::print(stderr, "{}: {}\n", name, b.mismatch);
  return 1;
}

}  // namespace streampipe::cli
