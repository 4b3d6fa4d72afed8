// SPDX-License-Identifier: Apache-2.0
#pragma once
// A short, verified end-to-end exercise of the library, printed as a table of checks.
// Returns 0 when every check passed, 1 otherwise.

#include <string>

namespace streampipe::cli {

int run_self_check(const std::string& out_dir);

}  // namespace streampipe::cli
