// SPDX-License-Identifier: Apache-2.0
#include "benchmark_command.hpp"

#include "benchmark_run.hpp"
#include "devices_option.hpp"
#include "option_checks.hpp"

#include <fmt/format.h>

#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>
#include <variant>
#include <vector>

namespace streampipe::cli {
namespace {

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

}  // namespace streampipe::cli
