// SPDX-License-Identifier: Apache-2.0
#include "streampipe/jit/errors.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <set>
#include <sstream>
#include <vector>

namespace streampipe::jit {
namespace {

// NVRTC writes "<name>(<line>): error: ...". Only lines of the program itself are collected
// (headers have their own names).
std::set<int> lines_named(const std::string& program_name, const std::string& log) {
  std::set<int> lines;
  const std::string prefix = program_name + "(";
  for (std::size_t pos = log.find(prefix); pos != std::string::npos; pos = log.find(prefix, pos + 1)) {
    if (pos > 0 && log[pos - 1] != '\n') continue;
    std::size_t i = pos + prefix.size();
    int line = 0;
    bool digits = false;
    while (i < log.size() && std::isdigit(static_cast<unsigned char>(log[i])) && line < 100000000) {
      line = line * 10 + (log[i] - '0');
      ++i;
      digits = true;
    }
    if (digits && i < log.size() && log[i] == ')') lines.insert(line);
  }
  return lines;
}

}  // namespace

std::string numbered_source_excerpt(const std::string& program_name, const std::string& log,
                                    const std::string& source, int context) {
  std::vector<std::string> lines;
  std::istringstream in(source);
  for (std::string l; std::getline(in, l);) lines.push_back(l);
  const std::set<int> named = lines_named(program_name, log);
  const int total = static_cast<int>(lines.size());
  const int width = static_cast<int>(std::to_string(std::max(total, 1)).size());
  std::vector<bool> show(lines.size(), named.empty());
  for (const int n : named)
    for (int i = std::max(1, n - context); i <= std::min(total, n + context); ++i) show[i - 1] = true;
  std::string out;
  int previous = 0;
  for (int i = 1; i <= total; ++i) {
    if (!show[i - 1]) continue;
    if (previous != 0 && i != previous + 1) out += fmt::format("{:>{}} | ...\n", "", width);
    out += fmt::format("{}{:>{}} | {}\n", named.count(i) ? ">" : " ", i, width, lines[i - 1]);
    previous = i;
  }
  return out;
}

CompileError::CompileError(std::string program_name, std::string log, const std::string& source)
    : JitError(fmt::format("NVRTC could not compile {}:\n{}\n{} (lines named by the log marked >):\n{}",
                           program_name, log, program_name,
                           numbered_source_excerpt(program_name, log, source))),
      program_name_(std::move(program_name)),
      log_(std::move(log)) {}

DriverError::DriverError(int status, const std::string& call, const std::string& error_name,
                         const std::string& error_text, const char* file, int line)
    : JitError(fmt::format("CUDA driver call {} failed at {}:{}: {} ({}): {}", call, file, line,
                           error_name, status, error_text)),
      status_(status) {}

}  // namespace streampipe::jit
