// SPDX-License-Identifier: Apache-2.0
#pragma once
// Private to src/io: the libpng and libjpeg back ends behind decode_image/encode_*.
// Each throws ImageError(source, reason) for bad data.

#include "streampipe/io/image.hpp"

namespace streampipe::io::detail {

[[nodiscard]] Image decode_png(std::span<const std::byte> data, const ImageReadOptions& options,
                               const std::string& source);
// Takes the image's share of options.limits.budget itself, once the header passed its checks.
[[nodiscard]] Image decode_jpeg(std::span<const std::byte> data, const ImageReadOptions& options,
                                const std::string& source);

// Throws ImageError when width x height x bytes_per_pixel exceeds max_bytes or overflows.
void check_decoded_size(std::uint64_t width, std::uint64_t height, std::uint64_t bytes_per_pixel,
                        std::size_t max_bytes, const std::string& source);

}  // namespace streampipe::io::detail
