// SPDX-License-Identifier: Apache-2.0
#pragma once
// A PNG encoder of our own for speed (PngStrategy::fast): every row gets one fixed filter,
// and the filtered bytes go through a deflate that codes them with Huffman codes fitted to
// each block and runs of one repeated byte (distance-1 matches): no string search, which
// on photographs finds almost nothing for its cost. zlib supplies the checksums.

#include "streampipe/io/image.hpp"

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace streampipe::io::detail {

// A zlib stream (RFC 1950) of `data`: dynamic-Huffman deflate blocks, runs as matches.
[[nodiscard]] std::vector<std::uint8_t> deflate_runs(std::span<const std::uint8_t> data);

// Writes a zlib stream's first two bytes and last four (`adler`, the data's Adler-32)
// around the deflate data already in the middle of `zlib`.
void finish_zlib(std::span<std::uint8_t> zlib, std::uint32_t adler);

// A non-interlaced PNG of a valid `image` with `filter` on every row. Throws
// std::invalid_argument for PngFilter::all or automatic (one fixed filter is the point).
[[nodiscard]] std::vector<std::byte> encode_png_fast(const Image& image, PngFilter filter);

// The PNG file around `zlib`, the zlib stream of a non-interlaced image's filtered rows:
// signature, IHDR, IDAT chunks of 1 MiB, IEND (what encode_png_fast writes around its own).
// `channels` 1-4, `bit_depth` 8 or 16.
[[nodiscard]] std::vector<std::byte> wrap_png(std::uint32_t width, std::uint32_t height, int channels, int bit_depth,
                                              std::span<const std::uint8_t> zlib);

}  // namespace streampipe::io::detail
