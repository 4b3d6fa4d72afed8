// SPDX-License-Identifier: Apache-2.0
#pragma once
// The structure of a JPEG file read from its markers, without decoding it: enough to decide
// whether a GPU decoder may take the file (coding process, sample precision, components,
// Adobe colour transform) and whether its entropy-coded data is complete (an EOI marker
// follows the first scan; libjpeg reports a file without one as truncated).

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>

namespace streampipe::io {

enum class JpegCoding { baseline, extended, progressive, lossless, hierarchical, arithmetic };

[[nodiscard]] const char* to_string(JpegCoding coding) noexcept;

struct JpegHeader {
  std::uint32_t width = 0, height = 0;  // height 0: defined later by a DNL marker
  int precision = 8;                    // bits per sample
  int components = 0;
  JpegCoding coding = JpegCoding::baseline;
  int adobe_transform = -1;  // APP14 "Adobe": 0 none (RGB, CMYK), 1 YCbCr, 2 YCCK; -1 absent
  bool jfif = false;         // an APP0 "JFIF" segment (3 components are then YCbCr)
  bool rgb_ids = false;      // 3 components named 'R', 'G', 'B' (libjpeg reads RGB without JFIF/Adobe)
  bool complete = false;     // an EOI marker follows the first scan
};

// nullopt when the data does not start with SOI or its markers up to the first scan are
// malformed (a segment running past the end, no frame header before the scan).
[[nodiscard]] std::optional<JpegHeader> read_jpeg_header(std::span<const std::byte> data) noexcept;

}  // namespace streampipe::io
