// SPDX-License-Identifier: Apache-2.0
// streampipe: move batches of data through NVIDIA GPUs at the speed of the hardware.

#include "commands.hpp"
#include "help_format.hpp"
#include "interrupt.hpp"
#include "outputs.hpp"
#include "parse_errors.hpp"
#include "ranks.hpp"
#include "streampipe/cuda/error.hpp"
#include "streampipe/version.hpp"

#include <cuda_runtime_api.h>

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <exception>
#include <new>
#include <system_error>
#include <utility>
#include <vector>

namespace streampipe::cli {

namespace {

bool stdout_failure_reported = false;

// The last word of a failed run; a standard error that cannot take it changes nothing.
template <typename... Args>
void say(fmt::format_string<Args...> format, Args&&... args) noexcept {
  try {
    std::string line = fmt::format(format, std::forward<Args>(args)...);
    if (line.starts_with("streampipe:")) line.insert(10, Ranks::tag());  // which rank, under mpirun
    std::fputs(line.c_str(), stderr);
  } catch (...) {
  }
}

// Standard output is buffered: a full disk or a closed pipe may show only at the last flush.
int check_stdout(int status) {
  errno = 0;
  const bool flushed = std::fflush(stdout) == 0;
  const int err = errno;
  if ((flushed && std::ferror(stdout) == 0) || stdout_failure_reported) return status;
  say("streampipe: cannot write to standard output: {}\n",
             err != 0 ? std::strerror(err) : "an earlier write failed");
  return status == 0 ? 1 : status;
}

int run(int argc, char** argv) {
  CLI::App app{
      "streampipe: move images and arrays through NVIDIA GPUs, overlapping copies and kernels, and show where "
      "the time goes. Without a GPU every command runs on the CPU."};
  app.formatter(std::make_shared<HelpFormatter>());  // before the subcommands, which copy it
  app.require_subcommand(1);
  set_examples(app, {"streampipe gray photos/ -o gray/", "streampipe info", "streampipe bench streams"});
  app.footer("\nRun 'streampipe COMMAND --help' for a command's options.\n" + app.get_footer());
  app.set_version_flag("--version", fmt::format("streampipe {} (built with CUDA {}.{})", streampipe::version_string,
                                                CUDART_VERSION / 1000, CUDART_VERSION % 1000 / 10));

  std::vector<Command> commands;
  std::ranges::sort(command_registry(), {}, &RegisteredCommand::factory);  // link order varies
  for (const RegisteredCommand& command : command_registry()) commands.push_back(command.make(app));

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (const std::string unknown = unknown_word(app); !unknown.empty()) {
      say("streampipe: {}\n", unknown);
      return 2;
    }
    if (e.get_exit_code() == 0) return app.exit(e);  // --help, --version
    say("streampipe: {} ({})\n", e.what(), help_pointer(app));
    return 2;  // every parse and validation error is bad usage
  }
  // Under mpirun each rank runs this; MPI ends when the command is done, on every path. A
  // rank that fails outside its work (bad usage, a library error) ends the whole job: the
  // others would wait for it in their next collective step.
  struct StopRanks {
    int failed = 0;  // the status of a failure outside the work
    int fail(int status) noexcept {
      failed = status;
      return status;
    }
    ~StopRanks() {
      if (failed != 0 && Ranks::get().several()) Ranks::abort(failed);
      Ranks::stop();
    }
  } stop_ranks;
  try {
    Ranks::start();
    for (const auto& command : commands) {
      if (!command.app->parsed()) continue;
      // The commands that share their work among ranks; any other would run whole on each.
      const std::string name = command.app->get_name();
      if (Ranks::get().several() && name != "gray" && name != "mandelbrot" && name != "life" && name != "bench")
        throw UsageError(
            fmt::format("{} does not run under mpirun (several ranks); gray, life, mandelbrot and bench do", name));
      return command.run();
    }
  } catch (const UsageError& e) {
    say("streampipe: {}\n({})\n", e.what(), help_pointer(app));
    return stop_ranks.fail(2);
  } catch (const StdoutError& e) {
    stdout_failure_reported = true;
    say("streampipe: {}\n", e.what());
    return stop_ranks.fail(1);
  } catch (const streampipe::Error& e) {  // a library failed: which API, status and call
    say("streampipe: {}\n", e.what());
    return stop_ranks.fail(1);
  } catch (const std::bad_alloc& e) {
    say("streampipe: error: not enough memory ({}): try a smaller size or fewer at once\n", e.what());
    return stop_ranks.fail(1);
  } catch (const std::system_error& e) {
    // fmt throws this when a FILE* write fails: name standard output when it was the one.
    if (std::ferror(stdout) != 0) {
      stdout_failure_reported = true;
      say("streampipe: cannot write to standard output: {}\n", e.code().message());
    } else {
      say("streampipe: error: {}\n", e.what());
    }
    return stop_ranks.fail(1);
  } catch (const std::exception& e) {
    say("streampipe: error: {}\n", e.what());
    return stop_ranks.fail(1);
  }
  return 2;
}

}  // namespace
}  // namespace streampipe::cli

int main(int argc, char** argv) {
  using namespace streampipe::cli;
  try {
    interrupt::install();  // before any thread: they all inherit the blocked signals
  } catch (const std::exception& e) {
    say("streampipe: error: cannot handle interruptions: {}\n", e.what());
    return 1;
  }
  return check_stdout(run(argc, argv));
}
