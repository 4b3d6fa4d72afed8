#pragma once
// Each subcommand lives in its own file and registers itself on the top-level CLI11 app.
// A command's callback returns the process exit status: 0 success, 1 a failure in the
// work, 2 bad usage (CLI11 parse errors are mapped to 2 in main).

#include <CLI/CLI.hpp>

#include <functional>

namespace streampipe::cli {

struct Command {
  CLI::App* app = nullptr;       // the subcommand, owned by the parent app
  std::function<int()> run;      // called when this subcommand was selected
};

Command add_info(CLI::App& app);
Command add_demo(CLI::App& app);

// Thrown by a command for bad usage that CLI11 cannot see (mutually exclusive values, files
// that do not exist): main prints it and exits with 2.
struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

}  // namespace streampipe::cli
