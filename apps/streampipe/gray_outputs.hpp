// SPDX-License-Identifier: Apache-2.0
#pragma once
// gray's files around the conversion: the plan of every input and output, checked before any
// work (each output against every input and every other output, existing ones refused
// without --force), and the engine's timeline written after it (--trace, --gantt).

#include "gray_options.hpp"
#include "outputs.hpp"
#include "report_option.hpp"

#include "streampipe/tools/gray/plan.hpp"

#include <cstddef>

namespace streampipe::cli {

// The plan, every output claimed through `out`. Throws UsageError.
[[nodiscard]] tools::gray::Plan plan_gray(const GrayFlags& flags, Outputs& out, const ReportOptions& report);
// --trace and --gantt of a run of `files` files, where asked for.
void write_timeline(const GrayFlags& flags, const tools::gray::RunSummary& summary, std::size_t files,
                    const Outputs& out);

}  // namespace streampipe::cli
