// `streampipe demo`: the main job on a fresh machine. Describes the host and GPUs with a
// short bandwidth measurement, then runs a self-check that exercises the core layer end to
// end (pool, streams, events, copies, kernels, graphs) and verifies every result.

#include "commands.hpp"
#include "info_report.hpp"
#include "self_check.hpp"

#include <fmt/format.h>

#include <memory>

namespace streampipe::cli {

namespace {
struct DemoOptions {
  std::string out_dir = "streampipe-demo";
};

Command add_demo(CLI::App& app) {
  auto* sub = app.add_subcommand(
      "demo", "Describe this machine, measure its link briefly, and run a verified self-check "
              "of the library (uses the host backend when there is no GPU).");
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
            status = std::max(status, run_self_check(options->out_dir));
            return status;
          }};
}

}  // namespace

STREAMPIPE_COMMAND(add_demo);

}  // namespace streampipe::cli
