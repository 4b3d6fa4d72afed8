// SPDX-License-Identifier: Apache-2.0
#pragma once
// What a file holds, from its first bytes, so that an output replaces only a file of its
// own kind: a JSON report may replace an earlier report, never an image that an option took
// as its value by mistake ("--json a.png b.png"). Pure (read_file.hpp reads the bytes).

#include <cstddef>
#include <span>
#include <string_view>

namespace streampipe::host {

enum class Content { empty, json, svg, text, png, jpeg, binary };

// The kind of content `head` (a file's first bytes) begins: JSON ('{' or '[' first, after
// white space and a byte-order mark), SVG/XML ('<' first), other text (no NUL or other
// control bytes than tab, CR, LF, FF), a PNG or JPEG image (their magic), else binary.
[[nodiscard]] Content sniff_content(std::span<const std::byte> head) noexcept;
// "a JSON document", "a PNG image", ... for messages.
[[nodiscard]] std::string_view describe(Content content) noexcept;
// Whether an output that writes `written` may replace a file holding `found`: a text output
// (JSON, SVG, CSV) any text file (an earlier report, a placeholder), never an image or binary
// data; an image output an image; an empty file always (an output cut short).
[[nodiscard]] bool may_replace(Content written, Content found) noexcept;

}  // namespace streampipe::host
