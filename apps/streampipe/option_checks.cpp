// SPDX-License-Identifier: Apache-2.0
#include "option_checks.hpp"

#include <cmath>
#include <cstdlib>

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

const CLI::Validator& not_negative() {
  static const CLI::Validator check(
      [](std::string& value) -> std::string {
        const auto first = value.find_first_not_of(" \t");
        if (first != std::string::npos && value[first] == '-') return "'" + value + "' is negative";
        return {};
      },
      "NOT NEGATIVE");
  return check;
}

const CLI::Validator& file_name() {
  static const CLI::Validator check(
      [](std::string& value) -> std::string { return value.empty() ? "'' (an empty name) names no file" : ""; }, "");
  return check;
}

void add_allow_special_outputs(CLI::App& app, bool& allow) {
  app.add_flag("--allow-special-outputs", allow,
               "let a FILE option name an existing device or FIFO (written into, e.g. /dev/null) or a symbolic link "
               "(written to its target); without it they are refused, even with --force");
}

}  // namespace streampipe::cli
