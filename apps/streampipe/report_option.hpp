// SPDX-License-Identifier: Apache-2.0
#pragma once
// `--report` and `--report-json FILE|-` for any tool: the trtexec-style latency report of
// report/latency_report.hpp over the tool's queries (what one query is differs per tool and
// is stated in --help, in the report's name and in the JSON's "query").
//
//   auto report = add_report_options(*sub, "one image (one engine item)");
//   out.claim("--report-json", report->json_path);  // before any work (outputs.hpp)
//   ... run, collecting a report::LatencyRun ...
//   emit_report(*report, run, "gray", out);          // prints and/or writes, as asked

#include "outputs.hpp"

#include "streampipe/report/latency_report.hpp"

#include <CLI/CLI.hpp>

#include <memory>
#include <string>

namespace streampipe::cli {

struct ReportOptions {
  bool print = false;     // --report: the summary with the human text
  std::string json_path;  // --report-json: the summary and every query's timestamps
  std::string query;      // what one query is, for the reader
  [[nodiscard]] bool wanted() const noexcept { return print || !json_path.empty(); }
};

// Adds both options to `app`; `query` says what one query is for this tool.
[[nodiscard]] std::shared_ptr<ReportOptions> add_report_options(CLI::App& app, const std::string& query);

// Summarizes `run`, prints the report with --report and writes the JSON (summary, every
// query, the tool's name and the host) with --report-json, through `out` (which claimed it).
void emit_report(const ReportOptions& options, const report::LatencyRun& run, const std::string& tool,
                 const Outputs& out);

}  // namespace streampipe::cli
