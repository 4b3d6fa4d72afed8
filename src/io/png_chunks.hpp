// SPDX-License-Identifier: Apache-2.0
#pragma once
// Private to src/io: a walk over a PNG's chunks in memory before libpng reads them. A chunk's
// length is a claim; libpng trusts it (it allocates ancillary chunks at their declared size,
// and warns only about the size), so lengths are held against the bytes that are really
// there. The walk also totals the compressed image data, which bounds the pixels the file
// can deliver: deflate expands at most 1032:1 (258 bytes per two-bit length/distance pair).

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

namespace streampipe::io::detail {

struct PngChunkWalk {
  std::uint64_t idat_bytes = 0;  // the IDAT chunks' data, together
};

// From after the signature up to IEND (or the end of the data). Throws ImageError naming
// the chunk and its offset when a declared length exceeds 2^31 - 1 or runs past the data.
[[nodiscard]] PngChunkWalk walk_png_chunks(std::span<const std::byte> data, const std::string& source);

// Whether `idat_bytes` of zlib data can inflate to the pixels of a width x height image of
// `bits_per_pixel` bits (filter bytes and interlacing only add to what is needed).
[[nodiscard]] bool png_data_can_hold(std::uint64_t idat_bytes, std::uint64_t width, std::uint64_t height,
                                     unsigned bits_per_pixel) noexcept;

}  // namespace streampipe::io::detail
