// SPDX-License-Identifier: Apache-2.0
// `streampipe bench <name>`: the benchmarks of bench/ (their declared parameters and outputs
// become options), printed as tables and written as JSON. Every output is verified; exit 1
// when one was wrong.

#include "commands.hpp"
#include "devices_option.hpp"
#include "json_text.hpp"
#include "option_checks.hpp"
#include "outputs.hpp"
#include "ranks.hpp"

#include "benchmarks.hpp"

#include "streampipe/cuda/device.hpp"
#include "streampipe/mpi/gather.hpp"
#include "streampipe/report/json_schema.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <map>
#include <memory>

namespace streampipe::cli {
namespace {

struct BenchOptions {
  std::string json_path;
  int runs = 7;
  int warmup = 2;
  std::string devices = "all";
  bool force = false;
  bool allow_special = false;
  std::map<std::string, std::string, std::less<>> outputs;  // declared output -> FILE or "-"
};

// One option per declared parameter, writing into `value` (whose type is the parameter's).
void add_parameter(CLI::App& app, const bench::Parameter& p, bench::Value& value) {
  std::visit([&](auto& v) {
    using T = std::decay_t<decltype(v)>;
    if constexpr (std::is_same_v<T, bool>) {
      app.add_flag("--" + p.name, v, p.help);
    } else {
      auto* option = app.add_option("--" + p.name, v, p.help);
      if (p.show_default) option->capture_default_str();
      if constexpr (std::is_same_v<T, std::int64_t> || std::is_same_v<T, std::vector<std::int64_t>>) {
        if (p.min < p.max && p.min >= 0)
          option->transform(whole_number(static_cast<std::uint64_t>(p.min), static_cast<std::uint64_t>(p.max)));
        else if (p.min < p.max)
          option->check(CLI::Range(static_cast<std::int64_t>(p.min), static_cast<std::int64_t>(p.max)));
      } else if constexpr (std::is_same_v<T, double> || std::is_same_v<T, std::vector<double>>) {
        option->check(finite_number());
        if (p.min < p.max) option->check(CLI::Range(p.min, p.max));
      }
      if (!p.choices.empty()) option->check(CLI::IsMember(p.choices));
      if constexpr (!std::is_arithmetic_v<T> && !std::is_same_v<T, std::string>) option->delimiter(',');
    }
  }, value);
}

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

Command add_benchmark(CLI::App& parent, const bench::Benchmark& b, const std::string& name,
                      const std::string& example) {
  auto* sub = parent.add_subcommand(name, b.description);
  const std::string plain = parent.get_parent() != nullptr ? "streampipe " + parent.get_name() + " " + name
                                                           : "streampipe " + name;
  set_examples(*sub, {plain, example});
  auto o = std::make_shared<BenchOptions>();
  o->runs = b.runs;
  o->warmup = b.warmup;
  sub->add_option("--json", o->json_path, "also write the results as JSON to FILE ('-': stdout)")
      ->check(file_name());
  sub->add_option("--runs", o->runs, "timed runs per row (the median is reported, with min and max)")
      ->capture_default_str()->transform(whole_number(1, 1000));
  sub->add_option("--warmup", o->warmup, "untimed runs first (module load, pool growth)")
      ->capture_default_str()->transform(whole_number(0, 100));
  add_devices_option(*sub, o->devices,
                     name == "streams" || name == "gray"
                         ? fmt::format("the GPUs: one-GPU rows run on the first; bench {} adds rows spread over 2, "
                                       "3, ... of them (e.g. --devices 0,1)", name)
                         : std::string("the GPUs: the rows run on the first (e.g. --devices 1)"));
  sub->add_flag("--force", o->force, "replace existing output files");
  add_allow_special_outputs(*sub, o->allow_special);
  auto values = std::make_shared<bench::Values>(bench::defaults(b));
  for (const auto& p : b.parameters) add_parameter(*sub, p, values->find(p.name)->second);
  for (const auto& output : b.outputs)
    sub->add_option("--" + output.name, o->outputs[output.name], output.help + " ('-': standard output alone)")
        ->check(file_name());
  const std::string command = parent.get_parent() != nullptr ? parent.get_name() + " " + name : name;
  return {sub, [&b, command, o, values] { return run_benchmark(b, command, *o, *values); }};
}

STREAMPIPE_COMMAND(add_bench);

}  // namespace streampipe::cli
