// SPDX-License-Identifier: Apache-2.0
// Fuzz target: the PNG reader (io::decode_image on libpng). Any input must decode to a valid
// Image or throw ImageError; nothing else may escape, crash or touch memory it does not own.
// A decoded image must survive encode_png and decode again unchanged (both 8 and 16 bits).
// libpng refuses a chunk whose CRC is wrong before it looks inside, so each input is read
// twice: as it is, and with every chunk's CRC made right (as libpng's own fuzzer ignores
// CRCs), which lets mutations reach the chunks' contents.

#include "streampipe/io/image.hpp"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <span>
#include <vector>

#include <zlib.h>

namespace {

using namespace streampipe::io;

void check(bool ok) {
  if (!ok) std::abort();  // libFuzzer reports the input
}

void decode_one(std::span<const std::byte> data, bool strip_16) {
  ImageReadOptions options;
  options.strip_16 = strip_16;
  // 4 Mpixel (at most 32 MiB decoded): large enough for every structure, small enough that
  // each input takes milliseconds under the sanitizers.
  options.limits.max_pixels = std::uint64_t{1} << 22;
  Image image;
  try {
    image = decode_image(data, options, "fuzz.png");
  } catch (const ImageError&) {
    return;
  }
  image.validate();
  check(!strip_16 || image.bit_depth == 8);
  if (std::uint64_t{image.width} * image.height > 4096) return;
  const Image again = decode_image(encode_png(image, {.compression = 1}), options, "round-trip.png");
  check(again.width == image.width && again.height == image.height && again.channels == image.channels &&
        again.bit_depth == image.bit_depth && again.pixels == image.pixels);
}

std::uint32_t be32(const std::vector<std::byte>& d, std::size_t i) {
  return (std::to_integer<std::uint32_t>(d[i]) << 24) | (std::to_integer<std::uint32_t>(d[i + 1]) << 16) |
         (std::to_integer<std::uint32_t>(d[i + 2]) << 8) | std::to_integer<std::uint32_t>(d[i + 3]);
}

// The chunks after the signature, each with the CRC of its type and data; false when no
// chunk is complete.
bool fix_crcs(std::vector<std::byte>& d) {
  bool fixed = false;
  std::size_t at = 8;
  while (at + 12 <= d.size()) {
    const std::uint64_t length = be32(d, at);
    if (length > d.size() - at - 12) break;
    const auto n = static_cast<std::size_t>(length);
    const auto crc = static_cast<std::uint32_t>(
        crc32(0, reinterpret_cast<const Bytef*>(d.data() + at + 4), static_cast<uInt>(n + 4)));
    for (int k = 0; k < 4; ++k) d[at + 8 + n + static_cast<std::size_t>(k)] = static_cast<std::byte>(crc >> (24 - 8 * k));
    fixed = true;
    at += 12 + n;
  }
  return fixed;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::span<const std::byte> bytes(reinterpret_cast<const std::byte*>(data), size);
  decode_one(bytes, false);
  decode_one(bytes, true);
  std::vector<std::byte> fixed(bytes.begin(), bytes.end());
  if (fix_crcs(fixed) && fixed != std::vector<std::byte>(bytes.begin(), bytes.end())) {
    decode_one(fixed, false);
    decode_one(fixed, true);
  }
  return 0;
}
