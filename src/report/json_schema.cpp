// SPDX-License-Identifier: Apache-2.0
#include "streampipe/report/json_schema.hpp"

#include "streampipe/version.hpp"

#include <fmt/format.h>

#include <stdexcept>

namespace streampipe::report {

std::string json_schema(std::string_view kind) { return fmt::format("streampipe.{}/{}", kind, kJsonSchemaRevision); }

nlohmann::json stamped(nlohmann::json document, std::string_view kind) {
  if (!document.is_object())
    throw std::invalid_argument(fmt::format("a {} JSON document must be an object to carry its schema", kind));
  document["streampipe_version"] = version_string;
  document["schema"] = json_schema(kind);
  return document;
}

}  // namespace streampipe::report
