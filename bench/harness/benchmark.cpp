// SPDX-License-Identifier: Apache-2.0
#include "harness/benchmark.hpp"

#include <fmt/format.h>

namespace streampipe::bench {

void State::set_device(int index, std::string name) {
  result_.device_index = index;
  result_.device_name = std::move(name);
}

void State::add_table(Table table) {
  print_(format_table(table));
  result_.tables.push_back(std::move(table));
}

const Value& State::value(std::string_view name) const {
  const auto it = values_.find(name);
  if (it == values_.end()) throw std::out_of_range(fmt::format("benchmark parameter '{}' was not declared", name));
  return it->second;
}

const Benchmark& find(std::string_view name) {
  for (const auto& b : catalog())
    if (b.name == name) return b;
  throw std::out_of_range(fmt::format("no benchmark named '{}'", name));
}

Values defaults(const Benchmark& benchmark) {
  Values values;
  for (const auto& p : benchmark.parameters) values.emplace(p.name, p.value);
  return values;
}

nlohmann::json to_json(const Value& value) {
  return std::visit([](const auto& v) { return nlohmann::json(v); }, value);
}

Result run(const Benchmark& benchmark, const Settings& settings, const Values& values,
           const std::function<void(const std::string&)>& print) {
  Result result;
  result.benchmark = benchmark.name;
  result.runs = settings.runs;
  result.warmup = settings.warmup;
  for (const auto& [name, value] : values) result.parameters[name] = to_json(value);
  State state(result, settings, values, print);
  benchmark.run(state);
  return result;
}

}  // namespace streampipe::bench
