// SPDX-License-Identifier: Apache-2.0
#include "signal_guard.hpp"

#include <iterator>
#include <mutex>
#include <pthread.h>

namespace streampipe::jit::detail {
namespace {

constexpr int kSignals[] = {SIGINT, SIGTERM, SIGXFSZ};

struct Saved {
  std::mutex mutex;
  int compiling = 0;  // compiles under way in the process
  struct sigaction actions[std::size(kSignals)]{};
};
Saved& saved() {
  static auto* s = new Saved;  // never destroyed: a compile may run while statics are destroyed
  return *s;
}

}  // namespace

CompileSignalGuard::CompileSignalGuard() noexcept {
  Saved& s = saved();
  {
    const std::lock_guard lock(s.mutex);
    if (s.compiling++ == 0)
      for (std::size_t i = 0; i < std::size(kSignals); ++i) ::sigaction(kSignals[i], nullptr, &s.actions[i]);
  }
  sigset_t block;
  sigemptyset(&block);
  sigaddset(&block, SIGINT);
  sigaddset(&block, SIGTERM);
  ::pthread_sigmask(SIG_BLOCK, &block, &thread_mask_);
}

CompileSignalGuard::~CompileSignalGuard() {
  Saved& s = saved();
  {
    const std::lock_guard lock(s.mutex);
    if (--s.compiling == 0)
      for (std::size_t i = 0; i < std::size(kSignals); ++i) ::sigaction(kSignals[i], &s.actions[i], nullptr);
  }
  // A signal that came meanwhile is delivered now, to the program's own handler.
  ::pthread_sigmask(SIG_SETMASK, &thread_mask_, nullptr);
}

}  // namespace streampipe::jit::detail
