// SPDX-License-Identifier: Apache-2.0
#pragma once
// What a failed parse names, beyond CLI11's own message: the command the parse reached and
// how to get its help, a misspelt command, or a word that is no option of that command, each
// with the closest name there is (did_you_mean.hpp).

#include <CLI/CLI.hpp>

#include <string>

namespace streampipe::cli {

// "run 'streampipe bench streams --help' for its options", for the command the parse reached.
[[nodiscard]] std::string help_pointer(CLI::App& app);
// What to say instead of CLI11's message, empty when nothing: a misspelt command (CLI11
// reports "A subcommand is required" first) with the commands there are, else a word that
// begins with '-' and is no option of the command reached (CLI11 sets it aside and reports
// what is missing instead).
[[nodiscard]] std::string unknown_word(CLI::App& app);

}  // namespace streampipe::cli
