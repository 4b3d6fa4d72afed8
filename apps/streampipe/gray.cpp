// SPDX-License-Identifier: Apache-2.0
// `streampipe gray INPUT... -o DIR`: PNG and JPEG files (or folders of them) to 8-bit
// grayscale with BT.601 luma (OpenCV's cvtColor rounding), on the engine's device set (the
// CPU and every GPU by default; tools::gray::convert). A bad file is reported with its name
// and reason, the others finish, exit 1.

#include "command_clock.hpp"
#include "commands.hpp"
#include "gray_options.hpp"
#include "gray_outputs.hpp"
#include "gray_progress.hpp"
#include "interrupt.hpp"
#include "json_text.hpp"
#include "outputs.hpp"
#include "ranks.hpp"
#include "report_option.hpp"
#include "tool_command.hpp"

#include "streampipe/host/host_info.hpp"
#include "streampipe/report/json_schema.hpp"
#include "streampipe/tools/gray/command_time.hpp"
#include "streampipe/tools/gray/job.hpp"
#include "streampipe/tools/gray/latency.hpp"
#include "streampipe/tools/gray/report.hpp"
#include "streampipe/tools/gray/text.hpp"

#include <fmt/format.h>

#include <chrono>
#include <memory>
#include <unistd.h>

namespace streampipe::cli {
namespace {

namespace gray = streampipe::tools::gray;

int run_gray(const GrayFlags& o, const ReportOptions& report_options) {
  // The command's own clock: each step before the first file is part of what a user waits for.
  using Clock = std::chrono::steady_clock;
  const auto ms = [](Clock::time_point a, Clock::time_point b) {
    return std::chrono::duration<double, std::milli>(b - a).count();
  };
  const auto t_run = Clock::now();
  gray::Options go = gray_options(o);
  const auto t_devices = Clock::now();
  const mpi::Job& ranks = Ranks::get();
  if (ranks.several() && (!o.gantt_path.empty() || report_options.wanted()))
    throw UsageError("--gantt and --report describe one process: under mpirun, --trace writes one trace with a row "
                     "per rank and --json one report of every rank");
  Outputs out(o.force, o.allow_special);
  const gray::Plan plan = plan_gray(o, out, report_options);
  // Under mpirun each rank converts its shard; none writes before all have checked the
  // outputs, or one rank's new file would read as "exists" to another.
  const auto shard = ranks.shard(plan.jobs.size());
  const std::vector<gray::Job> jobs(plan.jobs.begin() + static_cast<std::ptrdiff_t>(shard.begin),
                                    plan.jobs.begin() + static_cast<std::ptrdiff_t>(shard.end));
  ranks.barrier();
  // Part of a tree that cannot be read fails the run, but not the files that can be.
  if (ranks.leader())
    for (const auto& why : plan.unreadable) fmt::print(stderr, "streampipe gray: {} (skipped)\n", why);

  ProgressBar bar(jobs.size(), !o.quiet && !ranks.several() && ::isatty(STDERR_FILENO) != 0, Ranks::tag());
  go.on_file = [&bar](const gray::FileResult& f, std::size_t finished) { bar.file_done(f, finished); };
  bool interrupted = false;
  const auto t_convert = Clock::now();
  const gray::RunSummary s = [&] {
    // A first Ctrl-C finishes the files in flight; later (writing the JSON, which might
    // block on a FIFO) one ends the process at once.
    const interrupt::Graceful graceful;
    go.stop = graceful.token();
    gray::RunSummary summary = gray::convert(jobs, go);
    interrupted = go.stop.stop_requested();
    return summary;
  }();
  const auto t_done = Clock::now();
  bar.name_late_failures(s.files);
  const gray::CommandTime time{command_start().before_ms, command_start().resolution_ms, ms(command_start().at, t_run),
                               ms(t_run, t_devices),      ms(t_devices, t_convert),      ms(t_convert, t_done),
                               s.setup_ms};
  if (interrupted) {
    out.print("gray: interrupted: {} of {} file(s) written, {} failed, {} not converted; every output present is "
              "complete{}\n",
              s.ok, jobs.size(), s.failed, s.cancelled,
              o.json_path.empty() && o.trace_path.empty() && o.gantt_path.empty() && report_options.json_path.empty()
                  ? ""
                  : " (no --json, --trace, --gantt or --report-json: they describe whole runs)");
    return interrupt::status();
  }
  const int status = s.failed > 0 || !plan.unreadable.empty() ? 1 : 0;
  // What every report of the run carries (the host's description is asked for only then).
  const auto common = [&] {
    return nlohmann::json{{"tool", "gray"},
                          {"format", io::to_string(go.format)},
                          {"output_dir", o.output_dir},
                          {"host", host::describe_host()},
                          {"unreadable", plan.unreadable}};
  };
  if (ranks.several()) {
    const gray::JobReport job = gray::gather_job(ranks, s, status, !o.trace_path.empty(), common());
    if (!job.leader) return job.status;
    if (!o.quiet) out.print("{}", job.text);
    out.write(o.trace_path, json_text(job.trace, -1));
    out.write(o.json_path, json_text(job.json, 2));
    return job.status;
  }
  if (!o.quiet) {
    const gray::RunText text{.files = jobs.size(),
                             .unreadable = plan.unreadable.size(),
                             .gpu_wanted = go.engine.backend != pipeline::Backend::host && !go.engine.simulate_gpus};
    out.print("{}", o.verbose ? gray::full_report(s, time, text) : gray::summary_line(s, time, text));
  }
  write_timeline(o, s, jobs.size(), out);
  if (!o.json_path.empty()) {
    nlohmann::json j = gray::run_json(s, true);
    j.update(common());
    j.update(gray::command_json(s, time));
    out.write(o.json_path, json_text(report::stamped(std::move(j), "gray"), 2));
  }
  emit_report(report_options, gray::latency_run(s), "gray", out);
  return status;
}

Command add_gray(CLI::App& parent) {
  return add_tool(parent,
                  {"gray",
                   "Convert PNG and JPEG files, or folders of them, to 8-bit grayscale (BT.601 luma, OpenCV's "
                   "rounding) on the CPU and every GPU. Prints one summary line; -v prints where the time went. See "
                   "docs/gray.md.",
                   "one image (one engine item), submitted -> written; on the GPU, H2D, compute and D2H are its "
                   "slot's event intervals"},
                  add_gray_flags, run_gray,
                  {"streampipe gray photos/ -o gray/", "streampipe gray -r photos/ -o gray/ --format jpeg -v",
                   "streampipe gray photos/ -o gray/ --name '{stem}.{ext}'"});
}

}  // namespace

STREAMPIPE_COMMAND(add_gray);

}  // namespace streampipe::cli
