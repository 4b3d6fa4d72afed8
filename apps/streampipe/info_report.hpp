// SPDX-License-Identifier: Apache-2.0
#pragma once
// The body of `info`, shared with `demo` (which runs a shorter measurement).

#include "outputs.hpp"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace streampipe::cli {

struct InfoOptions {
  std::string devices = "all";  // --devices (devices_option.hpp)
  int size_mib = 256;
  int runs = 9;
  int warmup = 2;
  bool no_measure = false;
  bool no_pageable = false;
  std::string json_path;  // claimed in `out` by the caller
};

// Prints the report through `out`, writes --json there, and returns the exit status;
// `json_out`, when given, receives the JSON.
int run_info(const InfoOptions& options, const Outputs& out, nlohmann::json* json_out = nullptr);

}  // namespace streampipe::cli
