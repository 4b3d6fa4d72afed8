// SPDX-License-Identifier: Apache-2.0
#pragma once
// What every JSON document streampipe writes says about itself, so that a script reading
// one can tell which program wrote it and which layout it has: "streampipe_version" (the
// version that wrote it, streampipe/version.hpp) and "schema", "streampipe.<kind>/<n>"
// (e.g. "streampipe.info/1"). <n> grows when a key changes meaning or goes away; added keys
// keep it. Every writer stamps its document here rather than spelling the fields itself.
//
//   out.write(path, json_text(report::stamped(std::move(j), "gray"), 2));

#include <nlohmann/json.hpp>

#include <string>
#include <string_view>

namespace streampipe::report {

// The revision of every schema streampipe writes today.
inline constexpr int kJsonSchemaRevision = 1;

// "streampipe.<kind>/<revision>".
[[nodiscard]] std::string json_schema(std::string_view kind);

// `document` (an object) with "streampipe_version" and "schema" for `kind` set; throws
// std::invalid_argument for a document that is not an object.
[[nodiscard]] nlohmann::json stamped(nlohmann::json document, std::string_view kind);

}  // namespace streampipe::report
