// SPDX-License-Identifier: Apache-2.0
#include "interrupt.hpp"

#include "streampipe/host/atomic_file.hpp"

#include <fmt/format.h>

#include <atomic>
#include <csignal>
#include <cstdlib>
#include <mutex>
#include <pthread.h>
#include <system_error>
#include <thread>
#include <unistd.h>

namespace streampipe::cli::interrupt {
namespace {

// Never destroyed: a signal may arrive while static destructors run.
struct State {
  std::mutex mutex;
  int graceful = 0;  // Graceful objects alive
  std::stop_source source;
  std::atomic<int> first_signal{0};
};
State& state() {
  static auto* s = new State;
  return *s;
}

const char* signal_name(int sig) noexcept {
  switch (sig) {
    case SIGINT: return "SIGINT";
    case SIGTERM: return "SIGTERM";
    case SIGHUP: return "SIGHUP";
    case SIGQUIT: return "SIGQUIT";
  }
  return "signal";
}

void say(const std::string& text) noexcept {
  // Straight to the descriptor: standard error's FILE may be held by a thread printing.
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(STDERR_FILENO, text.data() + done, text.size() - done);
    if (n <= 0) return;
    done += static_cast<std::size_t>(n);
  }
}

[[noreturn]] void watch(sigset_t set) {
  State& s = state();
  for (;;) {
    int sig = 0;
    if (::sigwait(&set, &sig) != 0) continue;
    int first = 0;
    const bool is_first = s.first_signal.compare_exchange_strong(first, sig);
    bool graceful = false;
    {
      const std::lock_guard lock(s.mutex);
      graceful = is_first && s.graceful > 0;
    }
    if (graceful) {
      say(fmt::format("\nstreampipe: {}: finishing the work in flight, then stopping ({} again stops at once)\n",
                      signal_name(sig), sig == SIGINT ? "Ctrl-C" : "a signal"));
      s.source.request_stop();  // the command's stop callbacks run here
      continue;
    }
    const std::size_t removed = host::abandon_writes_in_progress();
    say(fmt::format("\nstreampipe: {}: stopped at once{}\n", signal_name(sig),
                    removed > 0 ? fmt::format("; {} partly written file(s) removed", removed) : std::string()));
    std::_Exit(128 + sig);
  }
}

}  // namespace

void install() {
  // A closed pipe or socket is a write error (EPIPE) that the command reports and stops at,
  // not a signal that ends the process in the middle of writing its files.
  std::signal(SIGPIPE, SIG_IGN);
  sigset_t set;
  sigemptyset(&set);
  for (const int sig : kSignals) sigaddset(&set, sig);
  if (const int err = ::pthread_sigmask(SIG_BLOCK, &set, nullptr); err != 0)
    throw std::system_error(err, std::generic_category(), "pthread_sigmask");
  (void)state();
  std::thread(watch, set).detach();
}

Graceful::Graceful() {
  const std::lock_guard lock(state().mutex);
  ++state().graceful;
}

Graceful::~Graceful() {
  const std::lock_guard lock(state().mutex);
  --state().graceful;
}

std::stop_token Graceful::token() const { return state().source.get_token(); }

int status() noexcept {
  const int sig = state().first_signal.load();
  return sig == 0 ? 0 : 128 + sig;
}

}  // namespace streampipe::cli::interrupt
