// SPDX-License-Identifier: Apache-2.0
// `streampipe info`: the GPUs and the measured limits every other report is held against.

#include "commands.hpp"
#include "devices_option.hpp"
#include "info_report.hpp"
#include "option_checks.hpp"

#include <memory>

namespace streampipe::cli {

namespace {

Command add_info(CLI::App& app) {
  auto* sub = app.add_subcommand(
      "info",
      "Describe this machine and its GPUs, and measure each GPU's copy bandwidth (host to device, device to "
      "host, both, device to device), alone and all at once.");
  auto options = std::make_shared<InfoOptions>();
  add_devices_option(*sub, options->devices,
                     "GPUs to describe and measure, each alone and then all copying at once: all, or GPU indices, "
                     "e.g. --devices 0,2; a GPU this machine does not have is refused, with the list of those it has");
  sub->add_option("--size-mib", options->size_mib, "bytes per copy, in MiB")->capture_default_str()
      ->transform(whole_number(1, 16384));
  sub->add_option("--runs", options->runs, "timed runs per figure (the median is reported)")
      ->capture_default_str()->transform(whole_number(1, 1000));
  sub->add_option("--warmup", options->warmup, "untimed runs before timing")->capture_default_str()
      ->transform(whole_number(0, 100));
  sub->add_flag("--no-measure", options->no_measure, "describe the devices only");
  sub->add_flag("--no-pageable", options->no_pageable, "skip the (slow) pageable measurements");
  auto force = std::make_shared<bool>(false);
  auto allow_special = std::make_shared<bool>(false);
  sub->add_option("--json", options->json_path, "also write the results as JSON to FILE ('-': standard output alone)")
      ->check(file_name());
  sub->add_flag("--force", *force, "replace an existing --json file");
  add_allow_special_outputs(*sub, *allow_special);
  set_examples(*sub, {"streampipe info", "streampipe info --no-measure",
                      "streampipe info --no-pageable --json info.json"});
  return {sub, [options, force, allow_special] {
            Outputs out(*force, *allow_special);
            out.claim("--json", options->json_path);
            return run_info(*options, out);
          }};
}

}  // namespace

STREAMPIPE_COMMAND(add_info);

}  // namespace streampipe::cli
