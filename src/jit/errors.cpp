// SPDX-License-Identifier: Apache-2.0
#include "streampipe/jit/errors.hpp"

#include "nvrtc_api.hpp"

#include <fmt/format.h>
#include <nvrtc.h>

#include <algorithm>
#include <cctype>
#include <set>
#include <sstream>
#include <utility>
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

NvrtcError::NvrtcError(int status, std::string call, std::string program_name, const std::string& log,
                       const char* file, int line)
    : NvrtcError({.api = Api::nvrtc,
                  .status = status,
                  .status_name = detail::nvrtc_status_name(status),
                  .description = fmt::format("program {}", program_name),
                  .call = std::move(call),
                  .file = file != nullptr ? file : "",
                  .line = line,
                  .detail = log},
                 program_name) {}

NvrtcError::NvrtcError(Failure failure, std::string program_name)
    : Error(std::move(failure)), program_name_(std::make_shared<const std::string>(std::move(program_name))) {}

CompileError::CompileError(std::string program_name, std::string log, const std::string& source, std::string call)
    : NvrtcError({.api = Api::nvrtc,
                  .status = NVRTC_ERROR_COMPILATION,
                  .status_name = detail::nvrtc_status_name(NVRTC_ERROR_COMPILATION),
                  .description = fmt::format("could not compile {}", program_name),
                  .call = std::move(call),
                  .file = {},
                  .line = 0,
                  .detail = fmt::format("{}\n{} (lines named by the log marked >):\n{}", log, program_name,
                                        numbered_source_excerpt(program_name, log, source))},
                 program_name),
      log_(std::make_shared<const std::string>(std::move(log))) {}

}  // namespace streampipe::jit
