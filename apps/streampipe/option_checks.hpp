// SPDX-License-Identifier: Apache-2.0
#pragma once
// Checks CLI11 runs on option values, so that bad values are bad usage (exit 2) naming the
// option, and the options every command with outputs shares.
//   sub->add_option("--width", w)->check(finite_number())->check(CLI::PositiveNumber);
//   sub->add_option("--json", path)->check(file_name());

#include <CLI/CLI.hpp>

namespace streampipe::cli {

// Refuses nan and inf (and their spellings), which CLI11's ranges let through (a NaN
// compares false with both bounds). A value that is not a number is left to the conversion.
[[nodiscard]] const CLI::Validator& finite_number();

// Refuses a negative value for an unsigned option, which CLI11 would wrap around to a huge
// one ("--seed -1" would read as 2^64 - 1).
[[nodiscard]] const CLI::Validator& not_negative();

// Refuses an empty name: "--json ''" would otherwise mean "not given".
[[nodiscard]] const CLI::Validator& file_name();

// --allow-special-outputs: write into an existing device or FIFO, or through a symbolic
// link, named by a FILE option (outputs.hpp); without it they are refused, --force or not.
void add_allow_special_outputs(CLI::App& app, bool& allow);

}  // namespace streampipe::cli
