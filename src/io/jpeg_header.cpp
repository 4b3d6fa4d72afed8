// SPDX-License-Identifier: Apache-2.0
// JPEG marker walk up to the first scan (see jpeg_header.hpp). Segment layout from ITU-T
// T.81 annex B, APP0 from JFIF 1.02, APP14 from Adobe's technical note 5116.

#include "streampipe/io/jpeg_header.hpp"

#include <cstring>

namespace streampipe::io {
namespace {

constexpr unsigned kMarker = 0xFF;
constexpr unsigned kSOI = 0xD8, kEOI = 0xD9, kSOS = 0xDA, kTEM = 0x01, kAPP0 = 0xE0, kAPP14 = 0xEE;
constexpr unsigned kDHT = 0xC4, kJPG = 0xC8, kDAC = 0xCC;

unsigned byte_at(std::span<const std::byte> d, std::size_t i) noexcept { return std::to_integer<unsigned>(d[i]); }

unsigned be16(std::span<const std::byte> d, std::size_t i) noexcept { return (byte_at(d, i) << 8) | byte_at(d, i + 1); }

bool is_sof(unsigned m) noexcept { return m >= 0xC0 && m <= 0xCF && m != kDHT && m != kJPG && m != kDAC; }

JpegCoding coding_of(unsigned sof) noexcept {
  switch (sof) {
    case 0xC0: return JpegCoding::baseline;
    case 0xC1: return JpegCoding::extended;
    case 0xC2: return JpegCoding::progressive;
    case 0xC3: return JpegCoding::lossless;
    case 0xC5: case 0xC6: case 0xC7: case 0xCD: case 0xCE: case 0xCF: return JpegCoding::hierarchical;
    default: return JpegCoding::arithmetic;  // C9, CA, CB
  }
}

// An EOI marker anywhere after `from`: inside entropy-coded data a 0xFF byte is followed by
// 0x00 (stuffing) or a restart marker, so FF D9 there is the end of the image.
bool has_eoi_after(std::span<const std::byte> d, std::size_t from) noexcept {
  for (std::size_t i = from; i + 1 < d.size(); ++i)
    if (byte_at(d, i) == kMarker && byte_at(d, i + 1) == kEOI) return true;
  return false;
}

}  // namespace

const char* to_string(JpegCoding coding) noexcept {
  switch (coding) {
    case JpegCoding::baseline: return "baseline";
    case JpegCoding::extended: return "extended sequential";
    case JpegCoding::progressive: return "progressive";
    case JpegCoding::lossless: return "lossless";
    case JpegCoding::hierarchical: return "hierarchical";
    case JpegCoding::arithmetic: return "arithmetic-coded";
  }
  return "unknown";
}

std::optional<JpegHeader> read_jpeg_header(std::span<const std::byte> d) noexcept {
  if (d.size() < 4 || byte_at(d, 0) != kMarker || byte_at(d, 1) != kSOI) return std::nullopt;
  JpegHeader h;
  bool have_frame = false;
  std::size_t i = 2;
  while (i + 1 < d.size()) {
    if (byte_at(d, i) != kMarker) return std::nullopt;
    const unsigned m = byte_at(d, i + 1);
    if (m == kMarker) {  // fill byte before a marker
      ++i;
      continue;
    }
    if (m == kTEM || (m >= 0xD0 && m <= 0xD7)) {  // standalone markers
      i += 2;
      continue;
    }
    if (m == kSOI || m == kEOI) return std::nullopt;  // no scan before the end
    if (i + 4 > d.size()) return std::nullopt;
    const std::size_t length = be16(d, i + 2);  // counts itself, not the marker
    if (length < 2 || i + 2 + length > d.size()) return std::nullopt;
    const std::size_t p = i + 4;  // payload
    const std::size_t payload = length - 2;
    if (is_sof(m)) {
      if (payload < 6 || have_frame) return std::nullopt;
      h.precision = static_cast<int>(byte_at(d, p));
      h.height = be16(d, p + 1);
      h.width = be16(d, p + 3);
      h.components = static_cast<int>(byte_at(d, p + 5));
      h.coding = coding_of(m);
      if (payload < 6 + 3 * static_cast<std::size_t>(h.components)) return std::nullopt;
      h.rgb_ids = h.components == 3 && byte_at(d, p + 6) == 'R' && byte_at(d, p + 9) == 'G' && byte_at(d, p + 12) == 'B';
      have_frame = true;
    } else if (m == kAPP0 && payload >= 5 && std::memcmp(d.data() + p, "JFIF", 5) == 0) {
      h.jfif = true;
    } else if (m == kAPP14 && payload >= 12 && std::memcmp(d.data() + p, "Adobe", 5) == 0) {
      h.adobe_transform = static_cast<int>(byte_at(d, p + 11));
    } else if (m == kSOS) {
      if (!have_frame) return std::nullopt;
      h.complete = has_eoi_after(d, i + 2 + length);
      return h;
    }
    i += 2 + length;
  }
  return std::nullopt;
}

}  // namespace streampipe::io
