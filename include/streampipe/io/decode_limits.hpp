// SPDX-License-Identifier: Apache-2.0
#pragma once
// How much a decoder may be made to allocate by a file's header. A header is a claim, not
// data: a 68-byte PNG header or a 700-byte JPEG can declare 65535 x 65535 pixels. Every
// decoder checks these limits from the header, before it allocates anything for the pixels,
// and refuses with an ImageError that names the file, the limit and how to raise it.
//
// Default pixel limit: 2^28 = 268,435,456 pixels (16384 x 16384). That is the same order as
// Pillow (warns above 89.5 Mpixel, refuses above 179 Mpixel) and ImageMagick's default
// policy (128 Mpixel), well under libpng's 10^6 x 10^6 user limits, and it bounds the worst
// case to 2 GiB decoded (RGBA at 16 bits) plus 768 MiB when gray expands it to 8-bit RGB.
// Cameras (100-150 Mpixel at most) and scans fit; larger images need the limit raised.

#include <cstdint>
#include <memory>
#include <string>

namespace streampipe::io {

class DecodeBudget;

struct DecodeLimits {
  static constexpr std::uint64_t kDefaultMaxPixels = std::uint64_t{1} << 28;
  // libjpeg-turbo's own fuzzers and djpeg -maxscans stop at 500; real progressive files
  // have about 10. Each scan is a pass over the whole coefficient buffer, so thousands of
  // tiny scans make a small file cost minutes.
  static constexpr int kDefaultMaxJpegScans = 1000;

  std::uint64_t max_pixels = kDefaultMaxPixels;  // width x height; 0 means no limit
  int max_jpeg_scans = kDefaultMaxJpegScans;     // progressive JPEG scans; 0 means no limit
  // How a user raises the limits, quoted in refusals (a program sets its own option name).
  std::string raise_hint = "raise io::DecodeLimits::max_pixels";
  // Decoded bytes shared with the other threads decoding at once (decode_budget.hpp); none
  // when empty.
  std::shared_ptr<DecodeBudget> budget;

  // True when a width x height image is within max_pixels.
  [[nodiscard]] bool allows(std::uint64_t width, std::uint64_t height) const noexcept;
  // Throws ImageError(source, ...) naming the size, the limit and raise_hint when
  // allows(width, height) is false.
  void check(std::uint64_t width, std::uint64_t height, const std::string& source) const;
};

}  // namespace streampipe::io
