// SPDX-License-Identifier: Apache-2.0
#pragma once
// What a Life run reports (tools/life/run.hpp), for the CLI to print and write: the table of
// every universe (its first, final, least and most population, and the device that ran it
// when there was a choice) with the stepping rate; the JSON summary; and the latency report
// of its generations (query = one generation of one universe). Pure: no clock, no device.

#include "streampipe/report/latency_report.hpp"
#include "streampipe/tools/life/run.hpp"

#include <nlohmann/json.hpp>

#include <string>

namespace streampipe::tools::life {

// The table and the line "12.3 ms stepping (4.5e+09 cell updates/s), 0.0 ms writing output".
[[nodiscard]] std::string report_text(const Options& options, const Summary& summary);
// The summary, stamped with the "life" schema (report/json_schema.hpp).
[[nodiscard]] nlohmann::json report_json(const Options& options, const Summary& summary);
// Summary::queries as a latency run (Options::timed).
[[nodiscard]] report::LatencyRun latency_run(const Options& options, const Summary& summary);

}  // namespace streampipe::tools::life
