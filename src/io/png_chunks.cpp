// SPDX-License-Identifier: Apache-2.0
// Chunk layout from the PNG specification (ISO/IEC 15948, section 5.3): length (4 bytes,
// big-endian, at most 2^31 - 1), type (4), data (length), CRC (4).

#include "png_chunks.hpp"

#include "streampipe/io/image.hpp"

#include <fmt/format.h>

namespace streampipe::io::detail {
namespace {

constexpr std::size_t kSignatureBytes = 8;
constexpr std::uint64_t kMaxChunkLength = 0x7fffffff;
constexpr std::uint64_t kDeflateMaxRatio = 1032;

std::uint32_t be32(std::span<const std::byte> d, std::size_t i) noexcept {
  return (std::to_integer<std::uint32_t>(d[i]) << 24) | (std::to_integer<std::uint32_t>(d[i + 1]) << 16) |
         (std::to_integer<std::uint32_t>(d[i + 2]) << 8) | std::to_integer<std::uint32_t>(d[i + 3]);
}

// The type as text when it is letters (as every valid type is), else as hex bytes.
std::string chunk_name(std::span<const std::byte> d, std::size_t i) {
  std::string name;
  for (std::size_t k = 0; k < 4; ++k) {
    const auto c = std::to_integer<unsigned char>(d[i + k]);
    if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z'))) {
      return fmt::format("{:02x} {:02x} {:02x} {:02x}", std::to_integer<unsigned>(d[i]),
                         std::to_integer<unsigned>(d[i + 1]), std::to_integer<unsigned>(d[i + 2]),
                         std::to_integer<unsigned>(d[i + 3]));
    }
    name += static_cast<char>(c);
  }
  return "'" + name + "'";
}

}  // namespace

PngChunkWalk walk_png_chunks(std::span<const std::byte> data, const std::string& source) {
  PngChunkWalk walk;
  std::size_t at = kSignatureBytes;
  while (at < data.size()) {
    // A header cut short is left to libpng, which names it a truncated file.
    if (data.size() - at < 8) break;
    const std::uint64_t length = be32(data, at);
    const std::uint64_t left = data.size() - at - 8;
    if (length > kMaxChunkLength)
      throw ImageError(source, fmt::format("PNG: chunk {} at byte {} declares {} bytes (at most 2^31 - 1): corrupt file",
                                           chunk_name(data, at + 4), at, length));
    if (length + 4 > left)
      throw ImageError(source, fmt::format("PNG: chunk {} at byte {} declares {} bytes, but only {} follow: "
                                           "truncated or corrupt file",
                                           chunk_name(data, at + 4), at, length, left < 4 ? 0 : left - 4));
    const std::uint32_t type = be32(data, at + 4);
    if (type == 0x49444154u) walk.idat_bytes += length;  // "IDAT"
    at += 12 + static_cast<std::size_t>(length);
    if (type == 0x49454e44u) break;  // "IEND": what follows is not ours to judge
  }
  return walk;
}

bool png_data_can_hold(std::uint64_t idat_bytes, std::uint64_t width, std::uint64_t height,
                       unsigned bits_per_pixel) noexcept {
  if (bits_per_pixel == 0) return true;
  // idat_bytes < 2^48 for any file in memory, so nothing here overflows; width and height
  // are below 2^31. One length/distance pair's worth of slack.
  const std::uint64_t inflated = kDeflateMaxRatio * idat_bytes + 258;
  return width * height <= inflated * 8 / bits_per_pixel;
}

}  // namespace streampipe::io::detail
