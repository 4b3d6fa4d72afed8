// SPDX-License-Identifier: Apache-2.0
// streampipe: move batches of data through NVIDIA GPUs at the speed of the hardware.

#include "commands.hpp"
#include "streampipe/cuda/error.hpp"
#include "streampipe/version.hpp"

#include <cuda_runtime_api.h>

#include <fmt/format.h>

#include <cstdio>
#include <exception>
#include <vector>

namespace streampipe::cli {

std::vector<CommandFactory>& command_registry() {
  static std::vector<CommandFactory> registry;
  return registry;
}

void set_example(CLI::App& app, const std::string& command_line) { app.footer("\nExample: " + command_line); }

}  // namespace streampipe::cli

int main(int argc, char** argv) {
  using namespace streampipe::cli;
  CLI::App app{
      "streampipe: overlap host<->device copies and kernels across CUDA streams, and measure "
      "where the time goes.\nWithout a GPU the tools run on the host backend (slowly)."};
  app.require_subcommand(1);
  set_example(app, "streampipe gray photos/ -o gray/ --format jpeg");
  app.set_version_flag("--version", fmt::format("streampipe {} (built with CUDA {}.{})", streampipe::version_string,
                                                CUDART_VERSION / 1000, CUDART_VERSION % 1000 / 10));

  std::vector<Command> commands;
  for (const CommandFactory factory : command_registry()) commands.push_back(factory(app));

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? 0 : 2;
  }
  try {
    for (const auto& command : commands)
      if (command.app->parsed()) return command.run();
  } catch (const UsageError& e) {
    fmt::print(stderr, "streampipe: {}\n", e.what());
    return 2;
  } catch (const streampipe::Error& e) {  // a library failed: which API, status and call
    fmt::print(stderr, "streampipe: {}\n", e.what());
    return 1;
  } catch (const std::exception& e) {
    fmt::print(stderr, "streampipe: error: {}\n", e.what());
    return 1;
  }
  return 2;
}
