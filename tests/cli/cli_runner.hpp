// SPDX-License-Identifier: Apache-2.0
#pragma once
// Runs the streampipe executable as a child process (fork + exec, no shell), in a given
// folder, with its standard output and error captured (or standard output sent to a file
// such as /dev/full), optionally as an unprivileged user, under a memory limit, and with a
// hook that runs while it does (to send it signals). Every wait is bounded.

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <sys/types.h>
#include <vector>

namespace streampipe::testing {

struct RunOptions {
  std::string stdout_path;                   // empty: captured; else opened for writing (e.g. /dev/full)
  bool stdout_closed_pipe = false;           // standard output a pipe nobody reads (| head, after head ended)
  bool unprivileged = false;                 // as user nobody when the test runs as root
  std::uint64_t address_space_limit = 0;     // bytes (RLIMIT_AS), 0: none; ignored under sanitizers
  // Threads the child may start beyond those its user runs already (RLIMIT_NPROC, as
  // `ulimit -u` or a container's pids limit bite); 0: none. Needs `unprivileged` (root is
  // not held to it).
  unsigned extra_threads_limit = 0;
  std::chrono::seconds timeout{120};         // then SIGKILL, and timed_out
  std::function<void(pid_t)> while_running;  // called once after the start
};

struct RunResult {
  int exit_code = -1;  // -1 when ended by a signal
  int signal = 0;      // the signal that ended it, or 0
  bool timed_out = false;
  std::string out, err;
  long max_rss_kib = 0;
  [[nodiscard]] std::string describe() const;  // for failure messages
};

// `program args...` run in `cwd`. Throws std::runtime_error when it cannot be started.
RunResult run_program(const std::string& program, const std::vector<std::string>& args,
                      const std::filesystem::path& cwd, const RunOptions& options = {});

// The CLI under test.
RunResult run_cli(const std::vector<std::string>& args, const std::filesystem::path& cwd,
                  const RunOptions& options = {});

// Whether permission checks can be exercised here: as a user other than root, or as root
// able to become nobody in a child. When false, `why` says why not.
bool permissions_testable(std::string& why);

// The uid and gid a child with `unprivileged` runs as (for chown), or -1 when as ourselves.
uid_t unprivileged_uid();
gid_t unprivileged_gid();

}  // namespace streampipe::testing
