// SPDX-License-Identifier: Apache-2.0
#include "gray_outputs.hpp"

#include "commands.hpp"
#include "json_text.hpp"

#include "streampipe/pipeline/timeline.hpp"

#include <fmt/format.h>

#include <filesystem>
#include <vector>

namespace streampipe::cli {

namespace gray = streampipe::tools::gray;

gray::Plan plan_gray(const GrayFlags& o, Outputs& out, const ReportOptions& report_options) {
  Outputs::check_dir("-o", o.output_dir);
  gray::PlanOptions po;
  po.output_dir = o.output_dir;
  po.format = *io::parse_image_format(o.format);  // checked by gray_options
  po.recursive = o.recursive;
  po.name = o.name;
  po.force = true;  // existing outputs are checked below, after the inputs and the other outputs
  const std::vector<std::filesystem::path> inputs(o.inputs.begin(), o.inputs.end());
  gray::Plan plan;
  try {
    plan = gray::plan(inputs, po);
  } catch (const gray::PlanError& e) {
    throw UsageError(e.what());
  }
  // Every output against every input and every other output, by what the paths lead to.
  for (const auto& job : plan.jobs) out.input("input", job.input.string());
  out.claim("--json", o.json_path);
  out.claim("--trace", o.trace_path);
  out.claim("--gantt", o.gantt_path);
  out.claim("--report-json", report_options.json_path);
  if (!o.force) {
    try {
      gray::check_existing_outputs(plan.jobs);
    } catch (const gray::PlanError& e) {
      throw UsageError(e.what());
    }
  }
  for (const auto& job : plan.jobs) out.claim_regular("-o", job.output.string());
  return plan;
}

void write_timeline(const GrayFlags& o, const gray::RunSummary& s, std::size_t files, const Outputs& out) {
  if (o.trace_path.empty() && o.gantt_path.empty()) return;
  pipeline::Timeline timeline;
  for (const auto& r : s.records) timeline.add(r);
  if (!o.trace_path.empty()) out.write(o.trace_path, json_text(timeline.chrome_trace("streampipe gray"), -1));
  if (!o.gantt_path.empty())
    out.write(o.gantt_path, timeline.gantt_svg(fmt::format("streampipe gray: {} files on {}", files, s.device)));
}

}  // namespace streampipe::cli
