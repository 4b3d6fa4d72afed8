// SPDX-License-Identifier: Apache-2.0
#include "help_format.hpp"

#include "commands.hpp"

#include <array>
#include <string_view>

namespace streampipe::cli {
namespace {

// CLI11's own names for a value's type: they tell a programmer the C++ type, not a user what
// to write.
bool generic(std::string_view name) {
  static constexpr std::array<std::string_view, 9> names = {"TEXT", "INT", "UINT", "FLOAT", "NUMBER",
                                                            "BOOLEAN", "CHAR", "ENUM", "VALUE"};
  for (const auto n : names)
    if (name == n) return true;
  return false;
}

bool numeric(std::string_view name) {
  return name == "INT" || name == "UINT" || name == "FLOAT" || name == "NUMBER";
}

// "--no-verify{false}" -> "--no-verify": a flag's value in braces is CLI11's bookkeeping.
std::string without_braces(const std::string& text) {
  std::string out;
  int depth = 0;
  for (const char c : text) {
    if (c == '{') ++depth;
    else if (c == '}' && depth > 0) --depth;
    else if (depth == 0) out += c;
  }
  return out;
}

}  // namespace

HelpFormatter::HelpFormatter() { column_width(34); }

std::string placeholder(const CLI::Option& opt) {
  const std::string full = opt.get_type_name();
  std::string base = full.substr(0, full.find(':'));
  if (base.size() > 2 && base.front() == '[') base = base.substr(1, base.find(',') - 1);  // "[INT,...]"
  if (!generic(base)) return base;
  // A check may name what the value is: option_checks.hpp's file_name() says FILE.
  if (full.find(":FILE") != std::string::npos) return "FILE";
  return numeric(base) ? "N" : "VALUE";
}

std::string HelpFormatter::make_option_name(const CLI::Option* opt, bool is_positional) const {
  return without_braces(CLI::Formatter::make_option_name(opt, is_positional));
}

std::string HelpFormatter::make_option_opts(const CLI::Option* opt) const {
  if (opt->get_type_size() == 0) return {};
  std::string out = " " + placeholder(*opt);
  if (opt->get_expected_max() == CLI::detail::expected_max_vector_size) out += " ...";
  if (opt->get_required()) out += " (required)";
  return out;
}

std::string HelpFormatter::make_option_desc(const CLI::Option* opt) const {
  std::string text = opt->get_description();
  if (opt->get_type_size() != 0 && !opt->get_default_str().empty())
    text += " [default: " + opt->get_default_str() + "]";
  return text;
}

void set_examples(CLI::App& app, std::initializer_list<std::string> command_lines) {
  std::string footer = "\nExamples:";
  for (const auto& line : command_lines) footer += "\n  " + line;
  app.footer(footer);
}

}  // namespace streampipe::cli
