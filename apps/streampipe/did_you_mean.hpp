// SPDX-License-Identifier: Apache-2.0
#pragma once
// The name a mistyped word most likely meant (`--fromat` -> `--format`, `grya` -> `gray`),
// by edit distance, for the "did you mean" of an unknown option or command. Pure.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace streampipe::cli {

// Levenshtein distance, counting a swap of two neighbours as one edit (--fromat is one from
// --format).
[[nodiscard]] std::size_t edit_distance(std::string_view a, std::string_view b);

// The name of `names` nearest `word`, when it is near enough to be what was meant: at most
// a third of the word's length away (and at least one edit allowed); the first of equals.
[[nodiscard]] std::optional<std::string> closest_name(std::string_view word, const std::vector<std::string>& names);

}  // namespace streampipe::cli
