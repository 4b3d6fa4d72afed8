// SPDX-License-Identifier: Apache-2.0
#include "cli_runner.hpp"

#include "support/sanitizers.hpp"

#include <fmt/format.h>

#include <csignal>
#include <fcntl.h>
#include <fstream>
#include <grp.h>
#include <sstream>
#include <stdexcept>
#include <sys/resource.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

namespace streampipe::testing {
namespace {

namespace fs = std::filesystem;

constexpr uid_t kNobody = 65534;

// A sanitizer's shadow memory takes terabytes of address space: no limit can be set there.
constexpr bool kSanitized = testing_support::kSanitized;

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

bool as_root() { return ::geteuid() == 0; }

// The tasks (threads) the user `uid` runs now, which RLIMIT_NPROC counts.
unsigned long tasks_of(uid_t uid) {
  unsigned long n = 0;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator("/proc", ec)) {
    const std::string name = e.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream status(e.path() / "status");
    unsigned long threads = 0;
    bool ours = false;
    for (std::string line; std::getline(status, line);) {
      if (line.rfind("Uid:", 0) == 0) ours = std::stoul(line.substr(4)) == uid;
      if (line.rfind("Threads:", 0) == 0) threads = std::stoul(line.substr(8));
    }
    if (ours) n += threads;
  }
  return n;
}

// In the child: only async-signal-safe calls until exec (`nproc` was counted before fork).
[[noreturn]] void exec_child(const std::string& program, const std::vector<char*>& argv, const fs::path& cwd,
                             const std::string& out, const std::string& err, const RunOptions& o,
                             unsigned long nproc) {
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
  int out_fd = ::open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (o.stdout_closed_pipe) {
    int ends[2];
    if (::pipe(ends) != 0) ::_exit(125);
    ::close(ends[0]);  // nobody will read: a write fails with EPIPE (or SIGPIPE)
    out_fd = ends[1];
  }
  const int err_fd = ::open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  const int null_fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  if (out_fd < 0 || err_fd < 0 || null_fd < 0) ::_exit(125);
  if (::dup2(null_fd, 0) < 0 || ::dup2(out_fd, 1) < 0 || ::dup2(err_fd, 2) < 0) ::_exit(125);
  if (o.address_space_limit != 0 && !kSanitized) {
    const rlimit limit{o.address_space_limit, o.address_space_limit};
    if (::setrlimit(RLIMIT_AS, &limit) != 0) ::_exit(125);
  }
  if (o.extra_threads_limit != 0) {
    const rlimit limit{nproc + o.extra_threads_limit, nproc + o.extra_threads_limit};
    if (::setrlimit(RLIMIT_NPROC, &limit) != 0) ::_exit(125);
  }
  if (o.unprivileged && as_root() && (::setgroups(0, nullptr) != 0 || ::setgid(kNobody) != 0 || ::setuid(kNobody) != 0))
    ::_exit(124);
  if (::chdir(cwd.c_str()) != 0) ::_exit(125);
  ::execv(program.c_str(), argv.data());
  ::_exit(127);
}

}  // namespace

std::string RunResult::describe() const {
  return fmt::format("exit {}{}{}\n--- stdout ---\n{}\n--- stderr ---\n{}", exit_code,
                     signal != 0 ? fmt::format(" (signal {})", signal) : "", timed_out ? " (timed out)" : "",
                     out.substr(0, 4000), err.substr(0, 4000));
}

RunResult run_program(const std::string& program, const std::vector<std::string>& args, const fs::path& cwd,
                      const RunOptions& o) {
  // Captures live beside the folder, so that a snapshot of the folder never sees them.
  static int serial = 0;
  const fs::path capture = fs::temp_directory_path() / fmt::format("sp-cli-capture-{}-{}", ::getpid(), serial++);
  const std::string out = o.stdout_path.empty() ? capture.string() + ".out" : o.stdout_path;
  const std::string err = capture.string() + ".err";
  std::vector<std::string> storage{program};
  storage.insert(storage.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& a : storage) argv.push_back(a.data());
  argv.push_back(nullptr);

  const unsigned long nproc =
      o.extra_threads_limit == 0 ? 0 : tasks_of(o.unprivileged && as_root() ? kNobody : ::getuid());
  const pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error("fork failed");
  if (pid == 0) exec_child(program, argv, cwd, out, err, o, nproc);
  if (o.while_running) o.while_running(pid);

  RunResult r;
  const auto deadline = std::chrono::steady_clock::now() + o.timeout;
  int status = 0;
  rusage usage{};
  for (;;) {
    const pid_t done = ::wait4(pid, &status, WNOHANG, &usage);
    if (done == pid) break;
    if (std::chrono::steady_clock::now() > deadline && !r.timed_out) {
      r.timed_out = true;
      ::kill(pid, SIGKILL);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  if (WIFEXITED(status)) r.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) r.signal = WTERMSIG(status);
  r.max_rss_kib = usage.ru_maxrss;
  if (o.stdout_path.empty()) r.out = slurp(out);
  r.err = slurp(err);
  std::error_code ec;
  fs::remove(capture.string() + ".out", ec);
  fs::remove(err, ec);
  if (r.exit_code == 124 && o.unprivileged) throw std::runtime_error("the child could not become nobody");
  if (r.exit_code == 125 || r.exit_code == 127) throw std::runtime_error("the child could not start: " + program);
  return r;
}

RunResult run_cli(const std::vector<std::string>& args, const fs::path& cwd, const RunOptions& options) {
  return run_program(STREAMPIPE_CLI_PATH, args, cwd, options);
}

bool permissions_testable(std::string& why) {
  if (!as_root()) return true;
  static const int probe = [] {
    const pid_t pid = ::fork();
    if (pid == 0)
      ::_exit(::setgid(kNobody) == 0 && ::setuid(kNobody) == 0 && ::access(STREAMPIPE_CLI_PATH, X_OK) == 0 ? 0 : 1);
    int status = 0;
    ::waitpid(pid, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
  }();
  if (probe != 0)
    why =
        "running as root, and a child cannot become user nobody able to run the CLI (permissions do not stop "
        "root)";
  return probe == 0;
}

uid_t unprivileged_uid() { return as_root() ? kNobody : static_cast<uid_t>(-1); }
gid_t unprivileged_gid() { return as_root() ? kNobody : static_cast<gid_t>(-1); }

}  // namespace streampipe::testing
