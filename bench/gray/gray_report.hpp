// SPDX-License-Identifier: Apache-2.0
#pragma once
// The gray run's report, shared by `streampipe gray` and `streampipe bench gray`: the
// "where the time went" table (host decode and encode, H2D, compute, D2H, device share) and
// the JSON form of a run.

#include "streampipe/tools/gray.hpp"

#include <nlohmann/json.hpp>

#include <string>

namespace streampipe::bench {

[[nodiscard]] std::string gray_time_table(const tools::gray::RunSummary& s);
// Totals, rates, the time split and the engine's timeline report; with `files`, one entry
// per file (input, output, ok, error, size, layout).
[[nodiscard]] nlohmann::json gray_run_json(const tools::gray::RunSummary& s, bool files);

}  // namespace streampipe::bench
