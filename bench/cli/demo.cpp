// SPDX-License-Identifier: Apache-2.0
// `streampipe demo`: the main job on a fresh machine. Describes the host and GPUs with a
// short bandwidth measurement, then runs a self-check that exercises the core layer end to
// end (pool, streams, events, copies, kernels, graphs) and verifies every result.

#include "commands.hpp"
#include "info_report.hpp"
#include "json_text.hpp"
#include "option_checks.hpp"
#include "outputs.hpp"

#include "harness/benchmark.hpp"
#include "self_check.hpp"

#include "streampipe/cuda/device.hpp"

#include <fmt/format.h>

#include <filesystem>
#include <memory>

namespace streampipe::cli {

namespace {
struct DemoOptions {
  std::string out_dir = "streampipe-demo";
  bool force = false;
};

Command add_demo(CLI::App& app) {
  auto* sub = app.add_subcommand(
      "demo", "Describe this machine, check the library, and run a short `bench streams` that writes "
              "Chrome traces and SVG Gantt charts of its runs.");
  auto options = std::make_shared<DemoOptions>();
  sub->add_option("-o,--output-dir,--out", options->out_dir, "write the outputs into DIR (created if needed)")
      ->capture_default_str()
      ->check(file_name())
      ->type_name("DIR");
  sub->add_flag("--force", options->force, "replace the outputs of an earlier demo in that folder");
  set_examples(*sub, {"streampipe demo", "streampipe demo -o demo/ --force"});
  return {sub, [options] {
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
            // Every file it will write, refused before any work when it exists.
            Outputs out(options->force);
            Outputs::check_dir("-o", options->out_dir);
            const std::string json = (std::filesystem::path(options->out_dir) / "bench.json").string();
            out.claim("-o", json);
            for (const auto& f : streams.files(values)) out.claim_regular("-o", f.path);

            InfoOptions info;
            info.size_mib = 64;
            info.runs = 5;
            info.warmup = 1;
            info.no_pageable = true;
            int status = run_info(info, out);
            out.print("\n");
            const bench::Table checks = bench::self_check();
            out.print("{}", bench::format_table(checks));
            for (const auto& check : checks.rows) status = std::max(status, check.verified ? 0 : 1);
            out.print("\nshort bench (full version: streampipe bench streams)\n");
            const auto result = bench::run(streams, {gpu ? 3 : 1, 1, 0, {0}, options->force, {}}, values,
                                           [&out](const std::string& text) { out.print("{}", text); });
            out.write(json, json_text(bench::envelope(result, bench::command_line()), 2));
            out.print("\nwrote {0}/bench.json, and for each engine run {0}/<run>.trace.json (Chrome trace: open in "
                      "https://ui.perfetto.dev) and {0}/<run>.svg (Gantt chart)\n",
                      options->out_dir);
            return std::max(status, result.verified() ? 0 : 1);
          }};
}

}  // namespace

STREAMPIPE_COMMAND(add_demo);

}  // namespace streampipe::cli
