// SPDX-License-Identifier: Apache-2.0
#pragma once
// A whole command timed as a user times it: the wall clock from starting the process to
// its exit (posix_spawn, then waitpid), its start-up, teardown and exit included. Standard
// input is /dev/null; standard output and error go to `log` (replaced), which a failed run
// can show. The child starts with no signal blocked and default signal actions, as from a
// shell, whatever this process blocks. Nothing here is shared between threads.

#include <filesystem>
#include <string>
#include <vector>

namespace streampipe::bench {

struct CommandRun {
  double wall_ms = 0;
  int exit_code = -1;  // the exit status; -1 when the process ended on a signal
  int signal = 0;      // the signal that ended it, else 0
  double limit_s = 0;  // the time limit it ran under (0: none)
  bool timed_out = false;  // it ran past limit_s and was killed (SIGKILL)
  [[nodiscard]] bool ok() const noexcept { return exit_code == 0; }
  // "exit status 1", "killed by signal 9 (Killed)", "did not finish within 300 s (killed)".
  [[nodiscard]] std::string describe() const;
};

// argv[0] is looked up in PATH when it holds no '/'. A process still running after
// `limit_s` seconds (> 0) is killed, so that a hang costs a known time, not the whole run.
// Throws std::runtime_error when the log cannot be opened or the process cannot be started
// (naming argv[0] and the reason).
[[nodiscard]] CommandRun run_command(const std::vector<std::string>& argv, const std::filesystem::path& log,
                                     double limit_s = 0);

// The last `max_bytes` of `log` (a failed command's last words), or "" when unreadable.
[[nodiscard]] std::string log_tail(const std::filesystem::path& log, std::size_t max_bytes = 2000);

// This executable (/proc/self/exe resolved), to run the tool itself as a user would.
[[nodiscard]] std::filesystem::path self_executable();

// argv joined for printing, each argument quoted where the shell would need it.
[[nodiscard]] std::string command_text(const std::vector<std::string>& argv);

}  // namespace streampipe::bench
