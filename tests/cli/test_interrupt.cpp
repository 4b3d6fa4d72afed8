// SPDX-License-Identifier: Apache-2.0
// Interruption: SIGINT, SIGTERM, SIGHUP and SIGQUIT sent to the CLI while it works, on the
// host backend. A command that can stop between items (gray, life) finishes what is in
// flight, says what finished and exits 128 + the signal; a second signal, or one sent to a command that cannot stop
// between items (mandelbrot), ends it at once. Either way no temporary file is left, every
// output present is complete, and the inputs are unchanged.
#include "bad_inputs.hpp"
#include "cli_runner.hpp"
#include "corpus.hpp"
#include "tree_snapshot.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <csignal>
#include <fstream>
#include <string>
#include <thread>
#include <unistd.h>

namespace streampipe::testing {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

// Whether the main thread of `pid` blocks SIGINT and SIGTERM (bits 2 and 15 of SigBlk), which
// the CLI does first thing, so that a signal sent then is its to handle.
bool signals_blocked(pid_t pid) {
  std::ifstream status(fmt::format("/proc/{}/status", pid));
  for (std::string line; std::getline(status, line);)
    if (line.rfind("SigBlk:", 0) == 0) {
      const unsigned long long mask = std::stoull(line.substr(7), nullptr, 16);
      const unsigned long long both = (1ull << (SIGINT - 1)) | (1ull << (SIGTERM - 1));
      return (mask & both) == both;
    }
  return false;
}

class Interrupt : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / fmt::format("sp-interrupt-{}-{}", ::getpid(),
                                                   ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }

  // Enough work that a signal finds the run busy: incompressible images, encoded slowly.
  void make_images(int count, std::uint32_t width = 300, std::uint32_t height = 300) {
    for (int i = 0; i < count; ++i)
      write_png(dir_ / "in" / fmt::format("img{:03}.png", i), width + static_cast<std::uint32_t>(i % 7), height);
  }

  // Calls `send(pid)` once `ready()` holds (or after 60 s, which fails the test).
  static std::function<void(pid_t)> when(std::function<bool()> ready, std::function<void(pid_t)> send) {
    return [ready, send](pid_t pid) {
      const auto deadline = std::chrono::steady_clock::now() + 60s;
      while (!ready() && std::chrono::steady_clock::now() < deadline) std::this_thread::sleep_for(2ms);
      EXPECT_TRUE(ready()) << "the run never got going";
      send(pid);
    };
  }

  // Outputs under `sub` that are not temporary files.
  std::size_t outputs(const std::string& sub) const {
    std::size_t n = 0;
    for (const auto& f : files_under(dir_ / sub)) n += f.filename().string().find(".tmp-") == std::string::npos;
    return n;
  }

  // No temporary file anywhere, every file under `sub` a complete image.
  void expect_no_debris(const std::string& sub) const {
    for (const auto& f : files_under(dir_)) {
      EXPECT_EQ(f.filename().string().find(".tmp-"), std::string::npos) << "left behind: " << f;
    }
    for (const auto& f : files_under(dir_ / sub)) expect_valid_image(f);
  }

  fs::path dir_;
};

TEST_F(Interrupt, GraySigintFinishesTheFilesInFlightThenExits130) {
  make_images(160);
  const TreeSnapshot inputs = TreeSnapshot::of(dir_ / "in");
  RunOptions o;
  o.while_running = when([this] { return outputs("out") >= 1; }, [](pid_t pid) { ::kill(pid, SIGINT); });
  const RunResult r = run_cli(gray_args({"in", "-o", "out", "--compression", "9"}), dir_, o);
  ASSERT_FALSE(r.timed_out) << r.describe();
  EXPECT_EQ(r.exit_code, 130) << r.describe();
  EXPECT_NE(r.err.find("SIGINT"), std::string::npos) << r.describe();
  EXPECT_NE(r.out.find("gray: interrupted:"), std::string::npos) << r.describe();
  EXPECT_NE(r.out.find("of 160 file(s) written"), std::string::npos) << r.describe();
  EXPECT_LT(outputs("out"), 160u) << "the signal came after the run";
  expect_no_debris("out");
  EXPECT_TRUE(inputs.changed(TreeSnapshot::of(dir_ / "in")).empty());
}

TEST_F(Interrupt, GraySigtermExits143) {
  make_images(120);
  RunOptions o;
  o.while_running = when([this] { return outputs("out") >= 1; }, [](pid_t pid) { ::kill(pid, SIGTERM); });
  const RunResult r = run_cli(gray_args({"in", "-o", "out", "--compression", "9", "--json", "r.json"}), dir_, o);
  ASSERT_FALSE(r.timed_out) << r.describe();
  EXPECT_EQ(r.exit_code, 143) << r.describe();
  EXPECT_NE(r.err.find("SIGTERM"), std::string::npos) << r.describe();
  EXPECT_FALSE(fs::exists(dir_ / "r.json")) << "a JSON of a run that did not finish";
  expect_no_debris("out");
}

TEST_F(Interrupt, GraySecondSigintStopsAtOnceWithoutPartialFiles) {
  // Images large enough that the work in flight outlasts the 20 ms between the signals (with
  // 300x300 ones an idle 2-core machine finished it first, and the run ended gracefully).
  make_images(24, 1600, 1200);
  RunOptions o;
  o.while_running = when([this] { return outputs("out") >= 1; },
                         [](pid_t pid) {
                           ::kill(pid, SIGINT);
                           std::this_thread::sleep_for(20ms);
                           ::kill(pid, SIGINT);
                         });
  const RunResult r = run_cli(gray_args({"in", "-o", "out", "--compression", "9"}), dir_, o);
  ASSERT_FALSE(r.timed_out) << r.describe();
  EXPECT_EQ(r.exit_code, 130) << r.describe();
  EXPECT_NE(r.err.find("stopped at once"), std::string::npos) << r.describe();
  expect_no_debris("out");
}

// SIGHUP (the terminal closed) and SIGQUIT (Ctrl-backslash) used to end a run at once, leaving
// temporary files (issue 36, class 10): they stop it as SIGINT does, with 128 + the signal.
TEST_F(Interrupt, GraySighupAndSigquitFinishTheFilesInFlightLikeSigint) {
  make_images(120);
  for (const int sig : {SIGHUP, SIGQUIT}) {
    fs::remove_all(dir_ / "out");
    RunOptions o;
    o.while_running = when([this] { return outputs("out") >= 1; }, [sig](pid_t pid) { ::kill(pid, sig); });
    const RunResult r = run_cli(gray_args({"in", "-o", "out", "--compression", "9"}), dir_, o);
    ASSERT_FALSE(r.timed_out) << r.describe();
    EXPECT_EQ(r.signal, 0) << "ended by the signal itself\n" << r.describe();
    EXPECT_EQ(r.exit_code, 128 + sig) << r.describe();
    EXPECT_NE(r.err.find(sig == SIGHUP ? "SIGHUP" : "SIGQUIT"), std::string::npos) << r.describe();
    EXPECT_NE(r.out.find("gray: interrupted:"), std::string::npos) << r.describe();
    expect_no_debris("out");
  }
}

TEST_F(Interrupt, LifeSigintKeepsCompleteFramesThenExits130) {
  write_text(dir_ / "glider.rle", "x = 3, y = 3, rule = B3/S23\nbob$2bo$3o!\n");
  RunOptions o;
  o.while_running = when([this] { return outputs("frames") >= 3; }, [](pid_t pid) { ::kill(pid, SIGINT); });
  const RunResult r = run_cli({"life", "--backend", "host", "--size", "400x400", "--density", "0.3", "-g", "100000000",
                               "--snapshot-every", "4", "-o", "frames", "--population", "p.csv"},
                              dir_, o);
  ASSERT_FALSE(r.timed_out) << r.describe();
  EXPECT_EQ(r.exit_code, 130) << r.describe();
  EXPECT_NE(r.out.find("life: interrupted after"), std::string::npos) << r.describe();
  EXPECT_FALSE(fs::exists(dir_ / "p.csv"));
  expect_no_debris("frames");
}

TEST_F(Interrupt, MandelbrotSigtermEndsAtOnceAndWritesNothing) {
  RunOptions o;
  // Once the CLI handles the signals (they are blocked in its main thread) and is at work.
  o.while_running = [](pid_t pid) {
    const auto deadline = std::chrono::steady_clock::now() + 30s;
    while (!signals_blocked(pid) && std::chrono::steady_clock::now() < deadline) std::this_thread::sleep_for(2ms);
    EXPECT_TRUE(signals_blocked(pid)) << "the CLI never took over SIGINT and SIGTERM";
    std::this_thread::sleep_for(300ms);
    ::kill(pid, SIGTERM);
  };
  const RunResult r = run_cli({"mandelbrot", "--backend", "host", "--size", "3000x3000", "-i", "100000"}, dir_, o);
  ASSERT_FALSE(r.timed_out) << r.describe();
  EXPECT_EQ(r.exit_code, 143) << r.describe();
  EXPECT_NE(r.err.find("stopped at once"), std::string::npos) << r.describe();
  EXPECT_TRUE(files_under(dir_).empty()) << "nothing was to be written";
}

}  // namespace
}  // namespace streampipe::testing
