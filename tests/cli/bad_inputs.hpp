// SPDX-License-Identifier: Apache-2.0
#pragma once
// Files for the bad-input corpus, made in the test: good PNG/JPEG images to compare with,
// and broken ones (cut short, wrong magic, a bad checksum, dimensions patched huge in an
// otherwise valid header), Life patterns good and bad. Each function writes `path`.

#include <cstdint>
#include <filesystem>
#include <string_view>

namespace streampipe::testing {

// A random RGB image (seeded by its size), as PNG or JPEG.
void write_png(const std::filesystem::path& path, std::uint32_t width = 23, std::uint32_t height = 17);
void write_jpeg(const std::filesystem::path& path, std::uint32_t width = 23, std::uint32_t height = 17);
// `bytes` of a good PNG of that size.
void write_truncated_png(const std::filesystem::path& path, std::size_t bytes);
// A good JPEG cut before its end marker.
void write_truncated_jpeg(const std::filesystem::path& path);
// A PNG whose IHDR declares width x height (with a valid CRC) over one tiny IDAT.
void write_png_declaring(const std::filesystem::path& path, std::uint32_t width, std::uint32_t height);
// A good JPEG whose frame header (SOF0) is patched to declare width x height.
void write_jpeg_declaring(const std::filesystem::path& path, std::uint16_t width, std::uint16_t height);
// A good PNG with one byte of IHDR changed, so that its CRC no longer matches.
void write_png_bad_crc(const std::filesystem::path& path);
// `text` as it is.
void write_text(const std::filesystem::path& path, std::string_view text);

}  // namespace streampipe::testing
