// SPDX-License-Identifier: Apache-2.0
#pragma once
// How every --help reads: options with a placeholder a reader understands (FILE, DIR, N,
// LIST) instead of CLI11's type names (TEXT, UINT:NOT NEGATIVE) and flag defaults
// (--no-verify{false}), defaults after the description, and a few examples at the end.
//
//   app.formatter(std::make_shared<HelpFormatter>());  // before the subcommands: they copy it
//   sub->add_option("--json", path, "write the summary as JSON to FILE")->type_name("FILE");
//   set_examples(*sub, {"streampipe gray photos/ -o gray/", "..."});

#include <CLI/CLI.hpp>

#include <initializer_list>
#include <string>
#include <vector>

namespace streampipe::cli {

class HelpFormatter : public CLI::Formatter {
 public:
  HelpFormatter();
  [[nodiscard]] std::string make_option_name(const CLI::Option* opt, bool is_positional) const override;
  [[nodiscard]] std::string make_option_opts(const CLI::Option* opt) const override;
  [[nodiscard]] std::string make_option_desc(const CLI::Option* opt) const override;
};

// The placeholder `opt` is shown with: its own type_name(...) when it has one, FILE when it
// is checked with file_name() (option_checks.hpp), else N for a number and VALUE otherwise.
[[nodiscard]] std::string placeholder(const CLI::Option& opt);

}  // namespace streampipe::cli
