// SPDX-License-Identifier: Apache-2.0
#pragma once
// The gray tool's run as a latency report: one query per converted image (one engine item),
// placed by pipeline::timeline_queries from the engine's timeline and results. Failed files
// are no queries; the iteration limit is the number of files; there is no warm-up.

#include "streampipe/report/latency_report.hpp"
#include "streampipe/tools/gray/convert.hpp"

namespace streampipe::tools::gray {

[[nodiscard]] report::LatencyRun latency_run(const RunSummary& summary);

}  // namespace streampipe::tools::gray
