// SPDX-License-Identifier: Apache-2.0
// run_command: a whole process timed from spawn to exit, its status and its log.

#include "harness/command.hpp"

#include <gtest/gtest.h>

#include <csignal>
#include <filesystem>
#include <pthread.h>
#include <unistd.h>

namespace streampipe::bench {
namespace {

namespace fs = std::filesystem;

struct TempLog {
  fs::path path = fs::temp_directory_path() / ("streampipe-test-command-" + std::to_string(::getpid()) + ".log");
  ~TempLog() {
    std::error_code ec;
    fs::remove(path, ec);
  }
};

TEST(Command, StatusLogAndWallClock) {
  TempLog log;
  const CommandRun run = run_command({"sh", "-c", "echo to-out; echo to-err >&2; sleep 0.2; exit 3"}, log.path);
  EXPECT_EQ(run.exit_code, 3);
  EXPECT_FALSE(run.ok());
  EXPECT_EQ(run.describe(), "exit status 3");
  EXPECT_GE(run.wall_ms, 200);
  EXPECT_LT(run.wall_ms, 10'000);
  const std::string tail = log_tail(log.path);
  EXPECT_NE(tail.find("to-out"), std::string::npos) << tail;
  EXPECT_NE(tail.find("to-err"), std::string::npos) << tail;
  EXPECT_EQ(log_tail(log.path, 7), "...to-err\n");
  EXPECT_TRUE(run_command({"/bin/sh", "-c", "read x; test -z \"$x\""}, log.path).ok()) << "stdin is /dev/null";
}

// A command past its limit is killed, counted as timed out, and the wait ends near the limit;
// one that finishes in time is timed as without a limit.
TEST(Command, ALimitKillsAHungCommand) {
  TempLog log;
  const CommandRun hung = run_command({"sleep", "30"}, log.path, 0.3);
  EXPECT_TRUE(hung.timed_out);
  EXPECT_FALSE(hung.ok());
  EXPECT_EQ(hung.signal, SIGKILL);
  EXPECT_GE(hung.wall_ms, 300.0);
  EXPECT_LT(hung.wall_ms, 10000.0);
  EXPECT_NE(hung.describe().find("did not finish within 0.3 s"), std::string::npos) << hung.describe();
  const CommandRun quick = run_command({"sh", "-c", "exit 4"}, log.path, 30);
  EXPECT_FALSE(quick.timed_out);
  EXPECT_EQ(quick.exit_code, 4);
  EXPECT_LT(quick.wall_ms, 10000.0);
}

TEST(Command, SignalsAndMissingPrograms) {
  TempLog log;
  const CommandRun killed = run_command({"sh", "-c", "kill -9 $$"}, log.path);
  EXPECT_EQ(killed.signal, SIGKILL);
  EXPECT_EQ(killed.exit_code, -1);
  EXPECT_NE(killed.describe().find("signal 9"), std::string::npos);
  EXPECT_THROW((void)run_command({"/no/such/program"}, log.path), std::runtime_error);
  EXPECT_THROW((void)run_command({"sh", "-c", "true"}, "/no/such/dir/log"), std::runtime_error);
}

TEST(Command, TheChildBlocksNoSignalThisThreadBlocks) {
  // As the CLI does for its signal-watching thread: a child inheriting the mask would not
  // die of SIGTERM (Python's multiprocessing pools hang on exit then).
  sigset_t term, old;
  sigemptyset(&term);
  sigaddset(&term, SIGTERM);
  ASSERT_EQ(::pthread_sigmask(SIG_BLOCK, &term, &old), 0);
  TempLog log;
  // grep is the child itself (no shell between, which might clear its mask).
  const CommandRun run = run_command({"grep", "^SigBlk:", "/proc/self/status"}, log.path);
  ::pthread_sigmask(SIG_SETMASK, &old, nullptr);
  ASSERT_TRUE(run.ok()) << run.describe();
  EXPECT_EQ(log_tail(log.path), "SigBlk:\t0000000000000000\n");
}

TEST(Command, QuotesWhatTheShellWouldSplit) {
  EXPECT_EQ(command_text({"gray", "a b", "it's", "-q"}), "gray 'a b' 'it'\\''s' -q");
  EXPECT_TRUE(fs::exists(self_executable()));
}

}  // namespace
}  // namespace streampipe::bench
