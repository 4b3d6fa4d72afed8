// SPDX-License-Identifier: Apache-2.0
#pragma once
// Each subcommand lives in its own file and registers itself:
//   STREAMPIPE_COMMAND(add_info);          // Command add_info(CLI::App& parent)
// Files outside this folder register the same way: bench/cli/ adds `bench`, `demo` and
// `serve-bench` (the CLI does not depend on the benchmarks; they depend on this kit).
// `streampipe --help` lists the commands alphabetically (by factory name).
// A command's run function returns the exit status: 0 success, 1 a failure in the work,
// 2 bad usage (CLI11 parse errors and UsageError map to 2 in main). What a command writes
// follows outputs.hpp; its --help ends with two or three examples (set_examples) and reads as
// help_format.hpp makes it.

#include <CLI/CLI.hpp>

#include <functional>
#include <initializer_list>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace streampipe::cli {

struct Command {
  CLI::App* app = nullptr;   // the subcommand, owned by its parent
  std::function<int()> run;  // called when this subcommand was selected
};

using CommandFactory = Command (*)(CLI::App& parent);

struct RegisteredCommand {
  std::string_view factory;  // the factory's name, add_<command>: what --help is ordered by
  CommandFactory make;
};

// The registry filled by static initializers in the command files: this folder's and
// bench/cli's (`bench`, `demo`, `serve-bench`), all compiled into the executable itself,
// not taken from an archive, so none is dropped by the linker. They run in an order the
// linker and unity batches choose: main sorts the registry by name before use.
inline std::vector<RegisteredCommand>& command_registry() {
  static std::vector<RegisteredCommand> registry;
  return registry;
}

struct Registration {
  Registration(std::vector<RegisteredCommand>& (*registry)(), std::string_view name, CommandFactory f) {
    registry().push_back({name, f});
  }
};

// Thrown for bad usage CLI11 cannot see (conflicting values, missing files): exit 2.
struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Ends `app`'s --help with an "Examples:" section, a command line a line (two or three: the
// common case first).
void set_examples(CLI::App& app, std::initializer_list<std::string> command_lines);

}  // namespace streampipe::cli

// Named after the factory, so that two registrations never clash in one unity batch.
#define STREAMPIPE_COMMAND(factory) \
  static const ::streampipe::cli::Registration sp_command_##factory(::streampipe::cli::command_registry, #factory, factory)
