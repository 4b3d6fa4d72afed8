// SPDX-License-Identifier: Apache-2.0
#include "parse_errors.hpp"

#include "did_you_mean.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <vector>

namespace streampipe::cli {

// The subcommand the parse reached (the deepest one parsed), and its name as typed:
// "streampipe bench streams".
namespace {

CLI::App* reached(CLI::App& app) {
  CLI::App* at = &app;
  for (auto parsed = at->get_subcommands(); !parsed.empty(); parsed = at->get_subcommands()) at = parsed.front();
  return at;
}

std::string command_name(CLI::App& app, const CLI::App* at) {
  std::string name;
  for (const CLI::App* a = at; a != nullptr && a != &app; a = a->get_parent()) name = " " + a->get_name() + name;
  return "streampipe" + name;
}

}  // namespace

std::string help_pointer(CLI::App& app) { return fmt::format("run '{} --help' for its options", command_name(app, reached(app))); }

namespace {

// CLI11 reports a missing subcommand before a misspelt one ("A subcommand is required"):
// the misspelt word is what to name. Empty when that is not the error.
std::string unknown_command(CLI::App& app) {
  CLI::App* at = reached(app);
  const std::vector<std::string> rest = at->remaining();
  if (rest.empty() || at->get_require_subcommand_min() == 0) return {};
  std::vector<std::string> names;
  for (const CLI::App* sub : at->get_subcommands([](CLI::App*) { return true; })) names.push_back(sub->get_name());
  const auto meant = closest_name(rest.front(), names);
  return fmt::format("'{}' is not a command of {}; {}the commands are: {}", rest.front(), command_name(app, at),
                     meant ? fmt::format("did you mean '{}'? ", *meant) : std::string(), fmt::join(names, ", "));
}

// A word that begins with '-' and is no option of the command reached: CLI11 sets it aside,
// and then reports what is missing ("inputs is required" for `gray -x.png -o out`) instead
// of the word. Empty when there is none.
std::string unknown_option(CLI::App& app) {
  CLI::App* at = reached(app);
  std::vector<std::string> names;
  for (const CLI::Option* opt : at->get_options()) {
    for (const auto& n : opt->get_lnames()) names.push_back("--" + n);
    for (const auto& n : opt->get_snames()) names.push_back("-" + n);
  }
  for (const std::string& word : at->remaining()) {
    if (word.size() < 2 || word.front() != '-') continue;
    const std::string typed = word.substr(0, word.find('='));
    if (const auto meant = closest_name(typed, names))
      return fmt::format("'{}' is not an option of {}; did you mean '{}'? ({})", typed, command_name(app, at), *meant,
                         help_pointer(app));
    return fmt::format("'{}' is not an option of {} ({}); a file whose name begins with '-' is given as ./{}", word,
                       command_name(app, at), help_pointer(app), word);
  }
  return {};
}

}  // namespace

std::string unknown_word(CLI::App& app) {
  std::string unknown = unknown_command(app);
  return unknown.empty() ? unknown_option(app) : unknown;
}

}  // namespace streampipe::cli
