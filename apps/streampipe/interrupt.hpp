// SPDX-License-Identifier: Apache-2.0
#pragma once
// SIGINT, SIGTERM, SIGHUP (the terminal went away) and SIGQUIT (Ctrl-\) end a run cleanly.
// The signals are blocked in every thread and taken by one watcher thread with sigwait, so
// no work runs in a signal handler:
//   - while a command holds a Graceful (gray, life: they can stop between items), the first
//     signal requests a stop through its token; the command stops submitting, lets the work
//     in flight finish (or cancels it), reports what finished and returns status();
//   - otherwise, and on a second signal, the temporary files of writes under way are
//     removed (host::abandon_writes_in_progress) and the process ends at once.
// Either way the exit status is 128 + the signal (130 SIGINT, 143 SIGTERM, 129 SIGHUP, 131
// SIGQUIT; no core dump for SIGQUIT), and no partial file is left: every output present is
// complete. SIGPIPE is ignored: a write to a closed pipe fails with EPIPE, which the command
// reports (exit 1) and stops at.

#include <csignal>
#include <stop_token>

namespace streampipe::cli::interrupt {

// The signals a run stops at.
inline constexpr int kSignals[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};

// Blocks kSignals, ignores SIGPIPE and starts the watcher. Call first in main, before any other
// thread exists (threads inherit the blocked signals). Throws std::system_error when the
// watcher cannot start.
void install();

// While one lives, the first signal asks for a stop instead of ending the process.
class Graceful {
 public:
  Graceful();
  ~Graceful();
  Graceful(const Graceful&) = delete;
  Graceful& operator=(const Graceful&) = delete;
  // Stop requested on the first signal; stop callbacks run on the watcher thread.
  [[nodiscard]] std::stop_token token() const;
};

// 128 + the first signal received (130, 143, 129, 131), or 0 when none came.
[[nodiscard]] int status() noexcept;

}  // namespace streampipe::cli::interrupt
