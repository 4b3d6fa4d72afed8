// SPDX-License-Identifier: Apache-2.0
#pragma once
// The gray run's report, which `streampipe gray` prints and writes (`bench gray` reads it
// back): the "where the time went" table (host decode and encode, H2D, compute, D2H, device share), the
// stage that bound the run (tools/gray/bound.hpp) and the JSON form of a run.

#include "streampipe/tools/gray/convert.hpp"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace streampipe::tools::gray {

[[nodiscard]] std::string time_table(const RunSummary& s);
// A line per member of the device set: what it did ("GPU 0: 812 file(s), 81% of the work,
// 402.3 images/s; joined 2.41 s after the start ..."), or why it did nothing.
[[nodiscard]] std::vector<std::string> device_lines(const RunSummary& s);
// The same as JSON, one object per member.
[[nodiscard]] nlohmann::json devices_json(const RunSummary& s);
// "bound by the host workers: busy 94% of 16 threads (read + decode 40%, encode + write 54%);
// device busy 3%"; empty for a run without records.
[[nodiscard]] std::string bound_line(const RunSummary& s);
// Totals, rates, the time split, the bound stage and the engine's timeline report; with `files`, one entry
// per file (input, output, ok, error, size, layout).
[[nodiscard]] nlohmann::json run_json(const RunSummary& s, bool files);

}  // namespace streampipe::tools::gray
