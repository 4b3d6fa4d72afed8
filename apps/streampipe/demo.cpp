// SPDX-License-Identifier: Apache-2.0
// `streampipe demo`: the main job on a fresh machine. Describes the host and GPUs with a
// short bandwidth measurement, then runs a self-check that exercises the core layer end to
// end (pool, streams, events, copies, kernels, graphs) and verifies every result.

#include "commands.hpp"
#include "info_report.hpp"

#include "harness/benchmark.hpp"
#include "self_check.hpp"

#include "streampipe/cuda/device.hpp"
#include "streampipe/report/atomic_file.hpp"

#include <fmt/format.h>

#include <memory>

namespace streampipe::cli {

namespace {
struct DemoOptions {
  std::string out_dir = "streampipe-demo";
};

Command add_demo(CLI::App& app) {
  auto* sub = app.add_subcommand(
      "demo", "Describe this machine, measure its link briefly, run a verified self-check of the "
              "library, then a short version of `bench streams` that writes Chrome traces (open in "
              "Perfetto) and SVG Gantt charts of the engine runs. Uses the host backend when there is "
              "no GPU.");
  auto options = std::make_shared<DemoOptions>();
  sub->add_option("-o,--out", options->out_dir, "folder for the demo's outputs")->capture_default_str();
  return {sub, [options] {
            InfoOptions info;
            info.size_mib = 64;
            info.runs = 5;
            info.warmup = 1;
            info.no_pageable = true;
            int status = run_info(info);
            fmt::print("\n");
            const bench::Table checks = bench::self_check();
            fmt::print("{}", bench::format_table(checks));
            for (const auto& check : checks.rows) status = std::max(status, check.verified ? 0 : 1);
            // A short bench: the full-size experiments on a GPU take a minute; on the host
            // backend they are cut down to seconds.
            const bool gpu = Device::count() > 0;
            const bench::Benchmark& streams = bench::find("streams");
            bench::Values values = bench::defaults(streams);
            values["images"] = std::int64_t{gpu ? 64 : 4};
            values["arrays"] = std::int64_t{gpu ? 100 : 2};
            values["chunked-mib"] = std::int64_t{gpu ? 256 : 64};
            values["overhead-items"] = std::int64_t{gpu ? 5000 : 1000};
            values["trace-dir"] = options->out_dir;
            fmt::print("\nshort bench (full version: streampipe bench streams)\n");
            const auto result = bench::run(streams, {gpu ? 3 : 1, 1, 0}, values,
                                           [](const std::string& text) { fmt::print("{}", text); });
            report::write_file_atomically(options->out_dir + "/bench.json",
                                          bench::envelope(result, bench::command_line()).dump(2) + "\n");
            fmt::print("\nwrote {0}/bench.json, and for each engine run {0}/<run>.trace.json (Chrome trace: open in "
                       "https://ui.perfetto.dev) and {0}/<run>.svg (Gantt chart)\n",
                       options->out_dir);
            return std::max(status, result.verified() ? 0 : 1);
          }};
}

}  // namespace

STREAMPIPE_COMMAND(add_demo);

}  // namespace streampipe::cli
