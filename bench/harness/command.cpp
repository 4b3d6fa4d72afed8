// SPDX-License-Identifier: Apache-2.0
#include "harness/command.hpp"

#include <fmt/format.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <fcntl.h>
#include <fstream>
#include <iterator>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <csignal>
#include <spawn.h>
#include <stdexcept>
#include <sys/wait.h>

extern char** environ;

namespace streampipe::bench {

std::string CommandRun::describe() const {
  if (timed_out) return fmt::format("did not finish within {:g} s (killed)", limit_s);
  if (signal != 0) return fmt::format("killed by signal {} ({})", signal, ::strsignal(signal));
  return fmt::format("exit status {}", exit_code);
}

CommandRun run_command(const std::vector<std::string>& argv, const std::filesystem::path& log, double limit_s) {
  if (argv.empty()) throw std::invalid_argument("run_command: no command");
  posix_spawn_file_actions_t files;
  posix_spawn_file_actions_init(&files);
  struct Cleanup {
    posix_spawn_file_actions_t* f;
    ~Cleanup() { posix_spawn_file_actions_destroy(f); }
  } cleanup{&files};
  // The child opens the log itself (O_CLOEXEC does not apply to actions), then shares it
  // between standard output and error.
  posix_spawn_file_actions_addopen(&files, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&files, STDOUT_FILENO, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&files, STDOUT_FILENO, STDERR_FILENO);
  // The child starts as from a shell: no signal blocked (this process may block SIGINT and
  // SIGTERM for a thread that waits for them, and a mask is inherited), default actions.
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  struct AttrCleanup {
    posix_spawnattr_t* a;
    ~AttrCleanup() { posix_spawnattr_destroy(a); }
  } attr_cleanup{&attr};
  sigset_t none, defaults;
  sigemptyset(&none);
  sigemptyset(&defaults);
  for (const int s : {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE}) sigaddset(&defaults, s);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setsigdefault(&attr, &defaults);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);

  CommandRun run;
  pid_t pid = 0;
  const auto t0 = std::chrono::steady_clock::now();
  const int err = argv[0].find('/') == std::string::npos
                      ? ::posix_spawnp(&pid, args[0], &files, &attr, args.data(), environ)
                      : ::posix_spawn(&pid, args[0], &files, &attr, args.data(), environ);
  if (err != 0) throw std::runtime_error(fmt::format("cannot start {}: {}", argv[0], std::strerror(err)));
  // The watchdog waits beside the blocking waitpid below, so the timing stays exact; the
  // pid cannot be reused before waitpid reaps it, so killing it late harms nothing else.
  run.limit_s = limit_s;
  std::mutex m;
  std::condition_variable reaped_cv;
  bool reaped = false;
  std::atomic<bool> killed{false};
  std::thread watchdog;
  if (limit_s > 0)
    watchdog = std::thread([&] {
      std::unique_lock lock(m);
      if (!reaped_cv.wait_for(lock, std::chrono::duration<double>(limit_s), [&] { return reaped; })) {
        killed = true;
        ::kill(pid, SIGKILL);
      }
    });
  int status = 0;
  int waited = 0;
  while ((waited = ::waitpid(pid, &status, 0)) < 0 && errno == EINTR) {
  }
  const int wait_error = errno;
  if (watchdog.joinable()) {
    {
      const std::lock_guard lock(m);
      reaped = true;
    }
    reaped_cv.notify_one();
    watchdog.join();
  }
  if (waited < 0) throw std::runtime_error(fmt::format("waiting for {}: {}", argv[0], std::strerror(wait_error)));
  run.timed_out = killed;
  run.wall_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  if (WIFEXITED(status)) {
    run.exit_code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    run.signal = WTERMSIG(status);
  }
  return run;
}

std::string log_tail(const std::filesystem::path& log, std::size_t max_bytes) {
  std::ifstream in(log, std::ios::binary);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return text.size() > max_bytes ? "..." + text.substr(text.size() - max_bytes) : text;
}

std::filesystem::path self_executable() { return std::filesystem::read_symlink("/proc/self/exe"); }

std::string command_text(const std::vector<std::string>& argv) {
  std::string out;
  for (const auto& a : argv) {
    if (!out.empty()) out += ' ';
    if (!a.empty() && a.find_first_of(" \t'\"\\$*?;&|<>()") == std::string::npos) {
      out += a;
    } else {
      out += '\'';
      for (const char c : a) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
      out += '\'';
    }
  }
  return out;
}

}  // namespace streampipe::bench
