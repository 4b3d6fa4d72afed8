// SPDX-License-Identifier: Apache-2.0
#pragma once
// A benchmark is one function of a State, with declared parameters (as nvbench's
// examples/axes.cu declares axes):
//
//   void my_bench(State& state) {
//     const auto n = state.get<std::size_t>("elements");
//     const Samples ms = measure(state.warmup(), state.runs(), {...});
//     state.add_table(...);  // rows with their samples; printed now, kept for the JSON
//   }
//   Benchmark b;
//   b.name = "mine";
//   b.parameters = {{"elements", "floats per array", std::int64_t{1 << 20}, 1, 1 << 30}};
//   b.run = my_bench;
//
// Whoever runs it (the CLI's `bench <name>`, `demo`) turns the declarations into options,
// calls run(), and prints through its own sink: measuring never prints tables itself. Files
// are the runner's too: a benchmark names the outputs it can make (`outputs`, each an
// option --<name> FILE; the content is left in Result::outputs) and the files it writes
// itself (`files`, checked by the runner before the run), so that one place refuses to
// overwrite them.

#include "harness/result.hpp"

#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <variant>
#include <vector>

namespace streampipe::bench {

// A bool is a flag (--<name>); lists are comma-separated or repeated.
using Value = std::variant<bool, std::int64_t, double, std::string, std::vector<std::int64_t>, std::vector<double>,
                           std::vector<std::string>>;
using Values = std::map<std::string, Value, std::less<>>;

struct Parameter {
  Parameter(std::string name_, std::string help_, Value value_, double min_ = 0, double max_ = 0,
            std::vector<std::string> choices_ = {}, bool show_default_ = true)
      : name(std::move(name_)), help(std::move(help_)), value(std::move(value_)), min(min_), max(max_),
        choices(std::move(choices_)), show_default(show_default_) {}
  std::string name;  // the option is --<name>
  std::string help;
  Value value;       // the default, and the type
  double min = 0, max = 0;            // numbers (each element of a list) must lie in [min, max] when min < max
  std::vector<std::string> choices;   // strings must be one of these when not empty
  bool show_default = true;           // false: the default means "chosen by the benchmark"
};

// A value the benchmark cannot use (a malformed size, an unknown kernel): bad usage.
struct ParameterError : std::invalid_argument {
  using std::invalid_argument::invalid_argument;
};

// An output a benchmark can make besides the envelope: the option --<name> FILE asks for it.
struct Output {
  std::string name;
  std::string help;
};

// A file a benchmark writes itself (a trace under a folder it was given), with the option
// that asked for it: refused before the run when it exists, unless Settings::force.
struct File {
  std::string option;
  std::string path;
};

struct Settings {
  int runs = 7;
  int warmup = 2;
  int device = 0;                             // the GPU of single-GPU benchmarks: devices' first
  std::vector<int> devices{0};                // every GPU a benchmark may spread over (--devices)
  bool force = false;                         // the files it writes itself may replace existing ones
  std::set<std::string, std::less<>> outputs;  // the declared outputs asked for, by name
};

class State {
 public:
  State(Result& result, const Settings& settings, const Values& values, std::function<void(const std::string&)> print)
      : result_(result), settings_(settings), values_(values), print_(std::move(print)) {}

  [[nodiscard]] int runs() const noexcept { return settings_.runs; }
  [[nodiscard]] int warmup() const noexcept { return settings_.warmup; }
  [[nodiscard]] int device() const noexcept { return settings_.device; }
  [[nodiscard]] const std::vector<int>& devices() const noexcept { return settings_.devices; }
  [[nodiscard]] bool force() const noexcept { return settings_.force; }
  // True when the declared output `name` was asked for: only then is it worth making.
  [[nodiscard]] bool wants(std::string_view output) const { return settings_.outputs.contains(output); }
  // The parameter `name` as T: integers and floating-point types convert from the declared
  // number; flags, strings and lists are returned as declared. Throws std::out_of_range for
  // a name that was not declared.
  template <typename T>
  [[nodiscard]] T get(std::string_view name) const {
    const Value& v = value(name);
    if constexpr (std::is_same_v<T, bool>)
      return std::get<bool>(v);
    else if constexpr (std::is_integral_v<T>)
      return static_cast<T>(std::get<std::int64_t>(v));
    else if constexpr (std::is_floating_point_v<T>)
      return static_cast<T>(std::get<double>(v));
    else
      return std::get<T>(v);
  }

  [[nodiscard]] Result& result() noexcept { return result_; }
  // Names the GPU the figures come from (the envelope's device).
  void set_device(int index, std::string name);
  // Keeps `table` for the JSON and prints it now.
  void add_table(Table table);
  // Prints `text` now (a line of context: the link measured, why a row is missing).
  void print(const std::string& text) const { print_(text); }

 private:
  [[nodiscard]] const Value& value(std::string_view name) const;
  Result& result_;
  Settings settings_;
  const Values& values_;
  std::function<void(const std::string&)> print_;
};

struct Benchmark {
  std::string name;         // `streampipe bench <name>`
  std::string description;  // its --help
  std::vector<Parameter> parameters;
  int runs = 7, warmup = 2;  // defaults of --runs and --warmup
  bool needs_gpu = false;    // refuses to run without one
  std::string mismatch;      // printed when an output did not match its reference
  std::vector<Output> outputs;  // further outputs it can make (Result::outputs)
  std::function<std::vector<File>(const Values&)> files;  // the files it would write itself; may be empty
  std::function<void(State&)> run;
};

// Every benchmark the CLI offers, by name.
[[nodiscard]] const std::vector<Benchmark>& catalog();
// The one named `name`; throws std::out_of_range when there is none.
[[nodiscard]] const Benchmark& find(std::string_view name);
// Each parameter's default.
[[nodiscard]] Values defaults(const Benchmark& benchmark);
// Runs `benchmark` with `values` (every declared parameter); tables and lines go to `print`
// as they are ready. The result holds the parameters, runs and warm-up it ran with.
[[nodiscard]] Result run(const Benchmark& benchmark, const Settings& settings, const Values& values,
                         const std::function<void(const std::string&)>& print);
[[nodiscard]] nlohmann::json to_json(const Value& value);

}  // namespace streampipe::bench
