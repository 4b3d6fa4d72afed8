// SPDX-License-Identifier: Apache-2.0
#include "report_option.hpp"

#include "commands.hpp"

#include "streampipe/report/atomic_file.hpp"
#include "streampipe/report/host_info.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <filesystem>

namespace streampipe::cli {

std::shared_ptr<ReportOptions> add_report_options(CLI::App& app, const std::string& query) {
  auto o = std::make_shared<ReportOptions>();
  o->query = query;
  app.add_flag("--report", o->print,
               fmt::format("print a trtexec-style latency report: throughput; latency, enqueue time, H2D, compute "
                           "and D2H (min, max, mean, median, p90, p95, p99); wall and GPU compute time; limits, "
                           "sync mode and warnings. One query is {}",
                           query));
  app.add_option("--report-json", o->json_path,
                 "write the latency report's summary and every query's timestamps as JSON to FILE");
  return o;
}

void check_report_output(const ReportOptions& options, bool force) {
  if (!options.json_path.empty() && !force && std::filesystem::exists(options.json_path))
    throw UsageError(fmt::format("--report-json {}: the file exists (use --force to overwrite)", options.json_path));
}

void emit_report(const ReportOptions& options, const report::LatencyRun& run, const std::string& tool, bool force) {
  if (!options.wanted()) return;
  const report::LatencySummary summary = report::summarize(run);
  if (options.print) fmt::print("{}", report::format_report(run, summary));
  if (!options.json_path.empty()) {
    nlohmann::json j = report::report_json(run, summary, true);
    j["tool"] = tool;
    j["query"] = options.query;
    j["host"] = report::describe_host();
    report::write_file_atomically(options.json_path, j.dump(1) + "\n", force ? report::Overwrite::allow : report::Overwrite::refuse);
  }
}

}  // namespace streampipe::cli
