// SPDX-License-Identifier: Apache-2.0
#include "option_checks.hpp"

#include "commands.hpp"

#include <fmt/format.h>

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <string>
#include <utility>

namespace streampipe::cli {

const CLI::Validator& finite_number() {
  static const CLI::Validator check(
      [](std::string& value) -> std::string {
        char* end = nullptr;
        const double v = std::strtod(value.c_str(), &end);
        if (end != value.c_str() && !std::isfinite(v)) return "'" + value + "' is not a finite number";
        return {};
      },
      "FINITE");
  return check;
}

CLI::Validator whole_number(std::uint64_t min, std::uint64_t max) {
  return CLI::Validator(
      [min, max](std::string& value) -> std::string {
        const std::string range = fmt::format("a whole number from {} to {}", min, max);
        if (value.find_first_not_of(" \t") != std::string::npos && value[value.find_first_not_of(" \t")] == '-')
          return fmt::format("'{}' is negative; give {}", value, range);
        std::uint64_t v = 0;
        const char* end = value.data() + value.size();
        const auto [at, ec] = std::from_chars(value.data(), end, v);
        if (value.empty() || value.find_first_not_of("0123456789") != std::string::npos || at != end)
          return fmt::format("'{}' is not {}", value, range);
        if (ec == std::errc::result_out_of_range || v < min || v > max)
          return fmt::format("'{}' is out of range: give {}", value, range);
        value = std::to_string(v);  // CLI11 would read a leading 0 as octal ("010" as 8)
        return {};
      },
      fmt::format("{}-{}", min, max));
}

const CLI::Validator& file_name() {
  static const CLI::Validator check(
      [](std::string& value) -> std::string {
        if (value.empty()) return "'' (an empty name) names no file";
        if (value.size() > 1 && value.front() == '-')
          return fmt::format("'{}' looks like an option, not a file name (a file whose name begins with '-' is "
                             "given as ./{})",
                             value, value);
        return {};
      },
      "FILE");  // the placeholder --help shows (help_format.cpp); a folder option names its own DIR
  return check;
}

void add_allow_special_outputs(CLI::App& app, bool& allow) {
  app.add_flag("--allow-special-outputs", allow,
               "let a FILE option name a device, FIFO or symbolic link (e.g. /dev/null)");
}

std::pair<std::uint32_t, std::uint32_t> parse_pair(const std::string& text, char sep, const char* what) {
  const auto at = text.find(sep);
  const auto bad = [&] { return UsageError(fmt::format("{} '{}' is not of the form A{}B with whole numbers", what, text, sep)); };
  if (at == std::string::npos) throw bad();
  const std::string a = text.substr(0, at), b = text.substr(at + 1);
  const auto num = [&](const std::string& s) {
    if (s.empty() || s.size() > 10 || s.find_first_not_of("0123456789") != std::string::npos) throw bad();
    const unsigned long long v = std::stoull(s);
    if (v > 0xffffffffull) throw bad();
    return static_cast<std::uint32_t>(v);
  };
  return {num(a), num(b)};
}

}  // namespace streampipe::cli
