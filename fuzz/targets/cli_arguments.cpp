// SPDX-License-Identifier: Apache-2.0
// Fuzz target: the command line's argument layer. The input is an argument vector (arguments
// separated by NUL bytes); the target builds the CLI's command tree from the same registry
// as main() (apps/streampipe, and bench/cli's bench commands) and parses it, running no
// command. Parsing must end in
// success, a CLI11 parse error or a UsageError (main's exit 2); any other exception means
// bad usage would be reported as a failure of the work (exit 1), and escapes as a finding.

#include "commands.hpp"

#include <CLI/CLI.hpp>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace streampipe::cli;
  constexpr std::size_t kMaxArguments = 64;
  std::vector<std::string> arguments{"streampipe"};
  std::string current;
  for (std::size_t i = 0; i < size && arguments.size() < kMaxArguments; ++i) {
    if (data[i] == 0) {
      arguments.push_back(std::move(current));
      current.clear();
    } else {
      current.push_back(static_cast<char>(data[i]));
    }
  }
  if (!current.empty() && arguments.size() < kMaxArguments) arguments.push_back(std::move(current));
  std::vector<char*> argv;
  for (auto& a : arguments) argv.push_back(a.data());
  argv.push_back(nullptr);

  CLI::App app{"streampipe (fuzzed)"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "streampipe fuzz");
  std::vector<Command> commands;
  for (const RegisteredCommand& command : command_registry()) commands.push_back(command.make(app));
  try {
    app.parse(static_cast<int>(arguments.size()), argv.data());
  } catch (const CLI::ParseError&) {
  } catch (const UsageError&) {
  }
  return 0;
}
