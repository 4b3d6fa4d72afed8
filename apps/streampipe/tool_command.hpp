// SPDX-License-Identifier: Apache-2.0
#pragma once
// A tool's subcommand (gray, life, mandelbrot), the three shaped alike: its flags bound to
// a struct that its run reads once parsed, then the --report options (report_option.hpp),
// then two or three examples (set_examples), as every --help of theirs reads.
//
//   Command add_gray(CLI::App& parent) {
//     return add_tool(parent, {"gray", "Convert ...", "one image (one engine item), ..."}, add_gray_flags,
//                     run_gray, {"streampipe gray photos/ -o gray/", "..."});
//   }

#include "commands.hpp"
#include "report_option.hpp"

#include <CLI/CLI.hpp>

#include <initializer_list>
#include <memory>
#include <string>

namespace streampipe::cli {

struct ToolText {
  std::string name;         // the subcommand
  std::string description;  // the first lines of its --help
  std::string query;        // what one query of its --report is (add_report_options)
};

// `run` gets the flags and report options as parsed and returns the exit status.
template <typename Flags>
Command add_tool(CLI::App& parent, const ToolText& text, void (*add_flags)(CLI::App&, Flags&),
                 int (*run)(const Flags&, const ReportOptions&), std::initializer_list<std::string> examples) {
  auto* sub = parent.add_subcommand(text.name, text.description);
  auto flags = std::make_shared<Flags>();
  add_flags(*sub, *flags);
  auto report = add_report_options(*sub, text.query);
  set_examples(*sub, examples);
  return {sub, [flags, report, run] { return run(*flags, *report); }};
}

}  // namespace streampipe::cli
