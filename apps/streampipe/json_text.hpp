// SPDX-License-Identifier: Apache-2.0
#pragma once
// JSON as text for the CLI's outputs, which never fails after the work is done: strings are
// file names among others, and a byte sequence that is not UTF-8 (a legal Linux name)
// becomes U+FFFD instead of throwing nlohmann::json's type_error 316.

#include <nlohmann/json.hpp>

#include <string>

namespace streampipe::cli {

// `j` dumped with `indent` (-1: one line), followed by a newline.
[[nodiscard]] inline std::string json_text(const nlohmann::json& j, int indent) {
  return j.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

}  // namespace streampipe::cli
