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

// A non-interlaced PNG of a valid `image` with `filter` on every row. Throws
// std::invalid_argument for PngFilter::all or automatic (one fixed filter is the point).
[[nodiscard]] std::vector<std::byte> encode_png_fast(const Image& image, PngFilter filter);

}  // namespace streampipe::io::detail
