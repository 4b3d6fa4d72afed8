// SPDX-License-Identifier: Apache-2.0
#include "streampipe/tools/gray/output_name.hpp"

#include "streampipe/tools/gray/plan.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

namespace streampipe::tools::gray {
namespace {

bool ends_with_any_case(std::string_view text, std::string_view end) {
  return text.size() >= end.size() &&
         std::equal(end.begin(), end.end(), text.end() - static_cast<std::ptrdiff_t>(end.size()),
                    [](char a, char b) { return std::tolower(static_cast<unsigned char>(a)) == std::tolower(static_cast<unsigned char>(b)); });
}

[[noreturn]] void bad_pattern(std::string_view pattern, std::string_view why) {
  throw PlanError(fmt::format("--name '{}': {} (the fields are {{stem}} and {{ext}}, e.g. --name '{{stem}}.{{ext}}')",
                              pattern, why));
}

}  // namespace

std::string output_file_name(const std::filesystem::path& input, std::string_view pattern, io::ImageFormat format) {
  if (pattern.empty()) bad_pattern(pattern, "an empty name");
  if (pattern.find('/') != std::string_view::npos) bad_pattern(pattern, "names a folder; it names the file alone");
  const std::string stem = input.stem().string();
  std::string ext = input.extension().string();
  if (!ext.empty()) ext.erase(0, 1);
  std::string name;
  for (std::size_t i = 0; i < pattern.size();) {
    if (pattern[i] == '}') bad_pattern(pattern, "a '}' without its '{'");
    if (pattern[i] != '{') {
      name += pattern[i++];
      continue;
    }
    const std::size_t close = pattern.find('}', i);
    if (close == std::string_view::npos) bad_pattern(pattern, "a '{' without its '}'");
    const std::string_view field = pattern.substr(i + 1, close - i - 1);
    if (field == "stem") name += stem;
    else if (field == "ext") name += ext;
    else bad_pattern(pattern, fmt::format("no field {{{}}}", field));
    i = close + 1;
  }
  const std::string_view extension = output_extension(format);
  if (!ends_with_any_case(pattern, extension)) name += extension;
  return name;
}

}  // namespace streampipe::tools::gray
