// SPDX-License-Identifier: Apache-2.0
#pragma once
// The bad-input corpus: each case makes its files in a fresh folder, runs one streampipe
// command there, and is checked the same way (corpus_test.cpp):
//   - the exit status is the expected one (0, 1 a failure in the work, 2 bad usage);
//   - standard error mentions every `mentions` entry (the file or option at fault, the
//     system's reason);
//   - no file that was there before changed or went away (SHA-256 of every file, the kind
//     of every special file, the target of every link), a refusal (exit 2) created
//     nothing, other runs created files only under `may_create`, and no temporary file
//     (".tmp-") is left anywhere;
//   - then the case's own `check`, if any.

#include "cli_runner.hpp"

#include <cstdint>
#include <filesystem>
#include <functional>
#include <ostream>
#include <stdexcept>
#include <string>
#include <vector>

namespace streampipe::testing {

// The case's own folder, in setups and checks.
using Dir = const std::filesystem::path&;

struct Case {
  std::string name;  // the test's name: letters, digits and _
  std::function<void(Dir dir)> setup;
  std::vector<std::string> args;  // run in the case's folder
  int exit_code = 2;
  std::vector<std::string> mentions;
  std::vector<std::string> may_create;    // relative path prefixes
  bool unprivileged = false;              // permissions must bite: as nobody under root, skipped when impossible
  std::string stdout_path;                // e.g. /dev/full; empty: captured
  bool stdout_closed_pipe = false;        // a pipe nobody reads (| head after head ended)
  std::uint64_t address_space_limit = 0;  // for decompression bombs, so that one cannot take the machine
  unsigned extra_threads_limit = 0;       // RLIMIT_NPROC above the user's threads (needs unprivileged)
  std::function<void(Dir dir, const RunResult& r)> check;
};

// Test names in gtest's output.
inline void PrintTo(const Case& c, std::ostream* os) { *os << c.name; }

// Thrown by a setup that cannot make its case on this machine (no tmpfs mount): skipped.
struct CaseUnavailable : std::runtime_error {
  using std::runtime_error::runtime_error;
};

std::vector<Case> gray_cases();
std::vector<Case> life_cases();
std::vector<Case> other_cases();  // mandelbrot, info, bench, serve-bench, demo, the top level

// A usage error, refused before any work (exit 2) naming what is wrong: `base` makes the
// files every case of its command starts from, `extra_setup` (if any) this case's own.
Case refused_case(std::string name, const std::function<void(Dir)>& base, std::vector<std::string> args,
                  std::vector<std::string> mentions, std::function<void(Dir)> extra_setup = {});

// A run whose standard output is /dev/full: a failure in the work (exit 1) that names the
// standard output and each of `more_mentions`.
Case to_a_full_standard_output(std::string name, std::function<void(Dir)> setup, std::vector<std::string> args,
                               const std::vector<std::string>& more_mentions = {});

// Runs the case as the unprivileged user: after its setup every file is shared with that
// user (share_with_everyone), then `path` (relative to the case's folder; none if empty)
// is left with `perms` alone.
void run_unprivileged(Case& c, const std::string& path = {},
                      std::filesystem::perms perms = std::filesystem::perms::none);

// Helpers for setups and checks.
// Every folder under `dir` writable and every file readable by the unprivileged user.
void share_with_everyone(const std::filesystem::path& dir);
// Mounts a tmpfs of `bytes` at `where` (unmounted after the case); throws CaseUnavailable
// when this machine does not allow it.
void mount_small_tmpfs(const std::filesystem::path& where, std::size_t bytes);
void unmount_small_tmpfs_all();
// Decodes `path` as an image, or fails the test naming it.
void expect_valid_image(const std::filesystem::path& path);
// Every regular file under `dir` (none when it does not exist).
std::vector<std::filesystem::path> files_under(const std::filesystem::path& dir);
// "gray <args...> --backend host -q --threads 2": the host backend keeps the corpus the same
// with or without a GPU.
std::vector<std::string> gray_args(std::vector<std::string> args);

}  // namespace streampipe::testing
