// SPDX-License-Identifier: Apache-2.0
#pragma once
// What every command writes, and where, by one set of rules:
//   - a machine-output option (--json, --report-json, --trace, --gantt, --svg, --population)
//     takes FILE, or "-" for standard output; then standard output carries that output alone
//     and the human text (tables, progress, summaries) goes to standard error. Two options
//     given "-" are bad usage;
//   - an existing FILE is bad usage unless --force: refused when claimed, before any work,
//     and written atomically with report::Overwrite::refuse, so that one appearing meanwhile
//     is not replaced either; two options naming one file are bad usage;
//   - -o DIR is the folder a command writes its outputs into, created when needed.
// Every refusal is a UsageError (exit 2) naming the option and the path.
//
//   Outputs out(o.force);
//   out.claim("--json", o.json_path);      // first: throws UsageError
//   out.print("{} files\n", n);            // human text: standard output, or standard error
//   out.write(o.json_path, j.dump(2));     // last: the file, or standard output for "-"

#include "streampipe/report/atomic_file.hpp"

#include <fmt/format.h>

#include <cstdio>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace streampipe::cli {

class Outputs {
 public:
  explicit Outputs(bool force = false) : force_(force) {}

  // Claims `path` for `option` (also a file the command writes under -o DIR, named by that
  // option); an empty path (the option not given) claims nothing; "-" standard output.
  void claim(std::string_view option, const std::string& path);
  // Checks -o DIR (or another folder option): not empty, not "-", not an existing file.
  static void check_dir(std::string_view option, const std::string& dir);
  // Claims standard output for something other than a file (life --live draws there).
  void claim_terminal(std::string_view what);

  [[nodiscard]] bool force() const noexcept { return force_; }
  [[nodiscard]] report::Overwrite overwrite() const noexcept {
    return force_ ? report::Overwrite::allow : report::Overwrite::refuse;
  }
  // True when an output claimed standard output.
  [[nodiscard]] bool machine_stdout() const noexcept { return !stdout_owner_.empty(); }
  // Where the human text goes: standard output, or standard error when an output has it.
  [[nodiscard]] std::FILE* human() const noexcept { return machine_stdout() ? stderr : stdout; }
  template <typename... Args>
  void print(fmt::format_string<Args...> format, Args&&... args) const {
    fmt::print(human(), format, std::forward<Args>(args)...);
  }
  // Writes `content` to `path` (claimed before): "-" standard output, else the file,
  // atomically. An empty path writes nothing.
  void write(const std::string& path, std::string_view content) const;

 private:
  bool force_;
  std::string stdout_owner_;                                 // the option that has standard output
  std::vector<std::pair<std::string, std::string>> files_;  // (option, path) claimed
};

}  // namespace streampipe::cli
