// SPDX-License-Identifier: Apache-2.0
// `streampipe bench <name>`: the benchmarks of bench/ (their declared parameters become
// options), printed as tables and written as JSON; and any registered with
// STREAMPIPE_BENCHMARK here (serve). Every output is verified; exit 1 when one was wrong.

#include "commands.hpp"

#include "benchmarks.hpp"

#include "streampipe/cuda/device.hpp"
#include "streampipe/report/atomic_file.hpp"

#include <fmt/format.h>

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

// One option per declared parameter, writing into `value` (whose type is the parameter's).
void add_parameter(CLI::App& app, const bench::Parameter& p, bench::Value& value) {
  std::visit([&](auto& v) {
    using T = std::decay_t<decltype(v)>;
    auto* option = app.add_option("--" + p.name, v, p.help);
    if (p.show_default) option->capture_default_str();
    if constexpr (std::is_same_v<T, std::int64_t> || std::is_same_v<T, std::vector<std::int64_t>>) {
      if (p.min < p.max) option->check(CLI::Range(static_cast<std::int64_t>(p.min), static_cast<std::int64_t>(p.max)));
    } else if constexpr (std::is_same_v<T, double>) {
      if (p.min < p.max) option->check(CLI::Range(p.min, p.max));
    }
    if (!p.choices.empty()) option->check(CLI::IsMember(p.choices));
    if constexpr (!std::is_arithmetic_v<T> && !std::is_same_v<T, std::string>) option->delimiter(',');
  }, value);
}

int run_benchmark(const bench::Benchmark& b, const BenchOptions& o, const bench::Values& values) {
  if (b.needs_gpu && Device::count() == 0) {
    fmt::print(stderr, "bench {} needs a CUDA device: {}\n", b.name, Device::unavailable_reason().value_or("?"));
    return 1;
  }
  if (Device::count() > 0 && o.device >= Device::count())
    throw UsageError(fmt::format("--device {}: this machine has {} GPU(s)", o.device, Device::count()));
  bench::Result result;
  try {
    result = bench::run(b, {o.runs, o.warmup, o.device}, values, [](const std::string& text) { fmt::print("{}", text); });
  } catch (const bench::ParameterError& e) {
    throw UsageError(e.what());
  }
  if (!o.json_path.empty())
    report::write_file_atomically(o.json_path, bench::envelope(result, bench::command_line()).dump(2) + "\n");
  if (result.verified()) return 0;
  fmt::print(stderr, "bench {}: {}\n", b.name, b.mismatch);
  return 1;
}

Command add_benchmark(CLI::App& parent, const bench::Benchmark& b) {
  auto* sub = parent.add_subcommand(b.name, b.description);
  auto options = add_bench_options(*sub, b.runs);
  options->warmup = b.warmup;
  sub->get_option("--warmup")->default_str(std::to_string(b.warmup));
  auto values = std::make_shared<bench::Values>(bench::defaults(b));
  for (const auto& p : b.parameters) add_parameter(*sub, p, values->find(p.name)->second);
  return {sub, [&b, options, values] { return run_benchmark(b, *options, *values); }};
}

Command add_bench(CLI::App& parent) {
  auto* sub = parent.add_subcommand(
      "bench", "Run benchmark experiments side by side with the peers a user would write "
               "instead; every output is verified, figures are medians with min/max.");
  sub->require_subcommand(1);
  auto experiments = std::make_shared<std::vector<Command>>();
  for (const auto& b : bench::catalog()) experiments->push_back(add_benchmark(*sub, b));
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
