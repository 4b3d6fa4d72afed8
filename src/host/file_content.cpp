// SPDX-License-Identifier: Apache-2.0
#include "streampipe/host/file_content.hpp"

#include <cstring>

namespace streampipe::host {

Content sniff_content(std::span<const std::byte> head) noexcept {
  const auto* b = reinterpret_cast<const unsigned char*>(head.data());
  const std::size_t n = head.size();
  if (n == 0) return Content::empty;
  static constexpr unsigned char png[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
  if (n >= 8 && std::memcmp(b, png, 8) == 0) return Content::png;
  if (n >= 3 && b[0] == 0xff && b[1] == 0xd8 && b[2] == 0xff) return Content::jpeg;
  for (std::size_t i = 0; i < n; ++i) {
    const unsigned char c = b[i];
    if (c < 0x20 && c != '\t' && c != '\n' && c != '\r' && c != '\f') return Content::binary;
    if (c == 0x7f) return Content::binary;
  }
  std::size_t i = n >= 3 && b[0] == 0xef && b[1] == 0xbb && b[2] == 0xbf ? 3 : 0;  // UTF-8 byte-order mark
  while (i < n && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r')) ++i;
  if (i == n) return Content::text;
  if (b[i] == '{' || b[i] == '[') return Content::json;
  if (b[i] == '<') return Content::svg;
  return Content::text;
}

std::string_view describe(Content content) noexcept {
  switch (content) {
    case Content::empty: return "an empty file";
    case Content::json: return "a JSON document";
    case Content::svg: return "an SVG (XML) document";
    case Content::text: return "a text file";
    case Content::png: return "a PNG image";
    case Content::jpeg: return "a JPEG image";
    case Content::binary: return "binary data";
  }
  return "unknown content";
}

bool may_replace(Content written, Content found) noexcept {
  const auto text = [](Content c) {
    return c == Content::empty || c == Content::json || c == Content::svg || c == Content::text;
  };
  const auto image = [](Content c) { return c == Content::png || c == Content::jpeg; };
  if (found == Content::empty || found == written) return true;
  if (text(written)) return text(found);
  if (image(written)) return image(found);
  return false;
}

}  // namespace streampipe::host
