// SPDX-License-Identifier: Apache-2.0
#pragma once
// --devices: the GPUs a tool spreads its work over. "all" (the default) is every GPU of the
// machine; "0,2" is GPUs 0 and 2, in that order (the order work is dealt out in). A list
// with an empty entry, a duplicate, a negative number or anything but whole numbers is bad
// usage, and so is a GPU the machine does not have: the message lists the GPUs there are.
// With --backend host the list names simulated devices instead ("0,1,2": three), which
// the host backend deals work out to as it would to GPUs.

#include <CLI/CLI.hpp>

#include <optional>
#include <string>
#include <vector>

namespace streampipe::cli {

// The indices TEXT names, in its order; nullopt for "all". Pure: no GPU is consulted.
// Throws UsageError naming TEXT and the bad entry.
[[nodiscard]] std::optional<std::vector<int>> parse_device_list(const std::string& text);

// TEXT against GPUs 0..gpu_names.size()-1: "all" is each of them. Throws UsageError as
// parse_device_list does, and for a GPU beyond them with the list of those there are
// ("--devices 3: there is no GPU 3; this machine has 2 GPUs: 0 (A), 1 (B)"), or, with no
// GPU, `no_gpu_reason`. Pure.
[[nodiscard]] std::vector<int> select_gpus(const std::string& text, const std::vector<std::string>& gpu_names,
                                           const std::string& no_gpu_reason);

// The same against this machine's GPUs: empty for "all" on a machine without one.
[[nodiscard]] std::vector<int> select_gpus(const std::string& text);

// Adds "--devices" to `app`, storing into `devices` (default "all"). `help` says how the
// command spreads its work, with an example (and, with a host backend, what simulated
// devices mean there).
CLI::Option* add_devices_option(CLI::App& app, std::string& devices, const std::string& help);

}  // namespace streampipe::cli
