// SPDX-License-Identifier: Apache-2.0
#pragma once
// NVRTC's front end installs handlers of its own for SIGINT and SIGTERM while it compiles
// (one that ends the process with status 4, skipping a Python program's `finally` and
// `atexit`), ignores SIGXFSZ, and afterwards resets all three to SIG_DFL: the program's own
// handlers are gone, and the next Ctrl-C kills it outright. Around a compile this guard
// saves the program's dispositions and puts them back (the last of concurrent compiles to
// finish does), and blocks SIGINT and SIGTERM in the compiling thread meanwhile: a signal
// sent to a program whose other threads block them too (a single-threaded script, the CLI)
// waits, and reaches the program's handler once the compile is over. A thread that does
// not block them may still take one during a compile, with NVRTC's handler.

#include <csignal>

namespace streampipe::jit::detail {

class CompileSignalGuard {
 public:
  CompileSignalGuard() noexcept;
  ~CompileSignalGuard();
  CompileSignalGuard(const CompileSignalGuard&) = delete;
  CompileSignalGuard& operator=(const CompileSignalGuard&) = delete;

 private:
  sigset_t thread_mask_{};
};

}  // namespace streampipe::jit::detail
