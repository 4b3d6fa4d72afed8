// SPDX-License-Identifier: Apache-2.0
#include "report_option.hpp"

#include "json_text.hpp"
#include "option_checks.hpp"

#include "streampipe/host/host_info.hpp"
#include "streampipe/report/json_schema.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace streampipe::cli {

std::shared_ptr<ReportOptions> add_report_options(CLI::App& app, const std::string& query) {
  auto o = std::make_shared<ReportOptions>();
  o->query = query;
  app.add_flag("--report", o->print,
               fmt::format("print a trtexec-style latency report (throughput, latency percentiles, H2D, compute, "
                           "D2H); one query is {}",
                           query));
  app.add_option("--report-json", o->json_path,
                 "write the latency report and every query's timestamps as JSON to FILE ('-': stdout)")
      ->check(file_name());
  return o;
}

void emit_report(const ReportOptions& options, const report::LatencyRun& run, const std::string& tool,
                 const Outputs& out) {
  if (!options.wanted()) return;
  const report::LatencySummary summary = report::summarize(run);
  if (options.print) out.print("{}", report::format_report(run, summary));
  if (!options.json_path.empty()) {
    nlohmann::json j = report::report_json(run, summary, true);
    j["tool"] = tool;
    j["query"] = options.query;
    j["host"] = host::describe_host();
    out.write(options.json_path, json_text(report::stamped(std::move(j), "latency-report"), 1));
  }
}

}  // namespace streampipe::cli
