// SPDX-License-Identifier: Apache-2.0
#pragma once
// Checks CLI11 runs on option values, so that bad values are bad usage (exit 2) naming the
// option, and the options every command with outputs shares.
//   sub->add_option("--width", w)->check(finite_number())->check(CLI::PositiveNumber);
//   sub->add_option("--json", path)->check(file_name());
//   sub->add_option("--threads", n)->transform(whole_number(0, 1024));  // transform: it rewrites

#include <CLI/CLI.hpp>

#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>
#include <utility>

namespace streampipe::cli {

// Refuses nan and inf (and their spellings), which CLI11's ranges let through (a NaN
// compares false with both bounds). A value that is not a number is left to the conversion.
[[nodiscard]] const CLI::Validator& finite_number();

// Refuses an empty name ("--json ''" would otherwise mean "not given") and a name that
// begins with '-' other than "-" itself: "--json --force" would write a file named --force,
// "-o --force" make a folder of that name. A file whose name begins with '-' is given as
// ./-name (--json=./-x).
[[nodiscard]] const CLI::Validator& file_name();

// A whole number in [min, max], written in decimal: CLI11 alone would wrap "-1" around to
// 2^64 - 1 for an unsigned option, saturate 2^64 to 2^64 - 1, and read "010" as octal 8
// (the value is passed on in plain decimal). The refusal names the range.
[[nodiscard]] CLI::Validator whole_number(std::uint64_t min, std::uint64_t max);
// The same over the whole range of T.
template <typename T>
[[nodiscard]] CLI::Validator whole_number() {
  static_assert(std::is_unsigned_v<T> || std::is_same_v<T, int> || std::is_same_v<T, std::int64_t>);
  if constexpr (std::is_unsigned_v<T>) return whole_number(0, std::numeric_limits<T>::max());
  else return whole_number(0, static_cast<std::uint64_t>(std::numeric_limits<T>::max()));
}

// "A<sep>B" with two whole numbers below 2^32 (--size WxH, --offset X,Y); UsageError naming
// `what` otherwise.
[[nodiscard]] std::pair<std::uint32_t, std::uint32_t> parse_pair(const std::string& text, char sep, const char* what);

// --allow-special-outputs: write into an existing device or FIFO, or through a symbolic
// link, named by a FILE option (outputs.hpp); without it they are refused, --force or not.
void add_allow_special_outputs(CLI::App& app, bool& allow);

}  // namespace streampipe::cli
