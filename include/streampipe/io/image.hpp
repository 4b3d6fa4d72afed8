// SPDX-License-Identifier: Apache-2.0
#pragma once
// Images in memory and on disk (PNG through libpng, JPEG through libjpeg-turbo).
//
// An Image is width x height pixels of 1-4 interleaved channels (gray, gray+alpha, RGB,
// RGBA) at 8 or 16 bits per sample, rows packed without padding. 16-bit samples are stored
// as native-endian std::uint16_t (two bytes each), so `pixels` can be reinterpreted.
//
// Decoding detects the format from the magic bytes, never from the file name. PNG is read
// in every variant libpng knows (1/2/4/8/16-bit, gray, gray+alpha, RGB, RGBA, palette,
// tRNS transparency, interlaced): palettes and sub-byte gray expand to 8-bit, tRNS becomes
// an alpha channel, 16-bit stays 16-bit unless `strip_16` asks for 8 (rounded scaling).
// JPEG gives gray or RGB; CMYK/YCCK is converted to RGB (Adobe-inverted CMYK, as written
// by Photoshop and by libjpeg with its Adobe marker); with ImageReadOptions::jpeg_luma a
// YCbCr JPEG gives its Y plane alone (gray). Every failure - corrupt, truncated,
// unsupported, too large - throws ImageError naming the source (file name or "<memory>")
// and the reason; the C libraries never exit() or print. Corrupt entropy-coded JPEG data
// (libjpeg's "premature end of data segment", bad Huffman codes, lost restart markers) is
// an error, not a gray patch. Nothing is allocated for the pixels before the header passed
// the limits (decode_limits.hpp) and, where the format allows a bound, before the file was
// seen to hold enough compressed data for the size it declares. Ancillary PNG chunks
// (text, ICC profiles, EXIF...) are skipped unread: only IHDR, PLTE, tRNS, IDAT matter here.

#include "streampipe/io/allocation_error.hpp"
#include "streampipe/io/decode_limits.hpp"
#include "streampipe/host/atomic_file.hpp"

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace streampipe::io {
using host::Overwrite;

enum class ImageFormat { png, jpeg };

[[nodiscard]] std::string_view to_string(ImageFormat format) noexcept;
// "png" or "jpeg"/"jpg" (case-insensitive); nullopt otherwise.
[[nodiscard]] std::optional<ImageFormat> parse_image_format(std::string_view name);

struct Image {
  std::uint32_t width = 0;
  std::uint32_t height = 0;
  int channels = 0;   // 1 gray, 2 gray+alpha, 3 RGB, 4 RGBA
  int bit_depth = 0;  // 8 or 16
  std::vector<std::uint8_t> pixels;  // height rows of row_bytes(), interleaved
  // The share of a DecodeBudget the pixels hold, when decoded under one; released with the
  // last copy of the image.
  std::shared_ptr<const void> reservation;

  // A zero-filled image; throws std::invalid_argument for bad channels/depth or a size
  // that overflows, AllocationError (a std::bad_alloc naming the size) when memory runs out.
  [[nodiscard]] static Image make(std::uint32_t width, std::uint32_t height, int channels,
                                  int bit_depth = 8);

  [[nodiscard]] std::size_t bytes_per_sample() const noexcept { return bit_depth == 16 ? 2 : 1; }
  [[nodiscard]] std::size_t bytes_per_pixel() const noexcept {
    return static_cast<std::size_t>(channels) * bytes_per_sample();
  }
  [[nodiscard]] std::size_t row_bytes() const noexcept { return width * bytes_per_pixel(); }
  [[nodiscard]] std::size_t size_bytes() const noexcept { return row_bytes() * height; }
  // Throws std::invalid_argument when the fields and the pixel buffer disagree.
  void validate() const;
};

class ImageError : public std::runtime_error {
 public:
  ImageError(std::string source, std::string reason, int error_number = 0);
  [[nodiscard]] const std::string& source() const noexcept { return source_; }
  [[nodiscard]] const std::string& reason() const noexcept { return reason_; }
  // The system's errno when the file could not be opened or read (host::ReadFileError's);
  // 0 when the bytes themselves were refused (corrupt, unsupported, too large).
  [[nodiscard]] int error_number() const noexcept { return error_number_; }

 private:
  std::string source_;
  std::string reason_;
  int error_number_ = 0;
};

struct ImageReadOptions {
  bool strip_16 = false;  // 16-bit PNG samples scaled to 8 bits (round(v * 255 / 65535))
  // Refuse images whose decoded size would exceed this, whatever the pixel limit says.
  std::size_t max_bytes = std::size_t{4} << 30;
  DecodeLimits limits;  // pixels and JPEG scans, checked from the header
  // A JPEG whose colour space libjpeg-turbo reads as YCbCr decodes to its Y plane alone: one
  // 8-bit channel, BT.601 luma, without the chroma planes' IDCT, upsampling and colour
  // conversion (docs/gray.md gives how it compares with the luma of the RGB decode). Gray
  // JPEGs decode as without it; CMYK, YCCK and RGB JPEGs and every PNG too.
  bool jpeg_luma = false;
};

// The format the leading bytes announce; nullopt for anything else.
[[nodiscard]] std::optional<ImageFormat> detect_image_format(std::span<const std::byte> data) noexcept;

// What a PNG's IHDR or a JPEG's frame header declares, read from the first bytes of the
// file without decoding: the layout decode_image() would give (palettes and sub-byte gray
// as 8-bit, a palette as RGB). nullopt when `data` is not PNG or JPEG or its header is
// malformed or beyond `data`.
struct ImageHeader {
  ImageFormat format = ImageFormat::png;
  std::uint32_t width = 0, height = 0;
  int channels = 0;
  int bit_depth = 8;
};
[[nodiscard]] std::optional<ImageHeader> read_image_header(std::span<const std::byte> data) noexcept;

// With options.limits.budget, the image's decoded bytes are reserved from its header first
// (waiting while other threads hold the budget; a JPEG's once its colour space says how many
// channels it decodes to). read_image refuses what is not a regular
// file (a FIFO, a device) by its kind before reading, and a file that is not PNG or JPEG
// from its first bytes, before reading the rest.
[[nodiscard]] Image decode_image(std::span<const std::byte> data, const ImageReadOptions& options = {},
                                 std::string_view source = "<memory>");
[[nodiscard]] Image read_image(const std::filesystem::path& path, const ImageReadOptions& options = {});
// The check read_image makes of a file's first bytes: throws ImageError(source, ...) for an
// empty file or one that is not PNG or JPEG.
void check_image_head(std::span<const std::byte> head, std::uint64_t size, const std::string& source);

// PNG row filter: the predictor each row is stored as the difference from. `all` is
// libpng's adaptive choice per row (tries all five, keeps the smallest sum of residuals),
// which costs 5-8x a single filter's time. `automatic` picks by level (resolve_png_encoding).
enum class PngFilter { automatic, none, sub, up, average, paeth, all };
// The compressor: zlib's match finder as `deflate` (Z_DEFAULT_STRATEGY), `filtered`
// (Z_FILTERED, libpng's default for filtered rows), `rle` (Z_RLE: runs only, distance 1),
// `huffman` (Z_HUFFMAN_ONLY: no matches at all); or `fast`, streampipe's own encoder: runs
// and Huffman codes fitted to each block, like rle without zlib's per-byte costs (one fixed
// filter, not interlaced). zlib's level only matters for deflate and filtered.
enum class PngStrategy { automatic, deflate, filtered, rle, huffman, fast };

// "auto", "none", "sub", "up", "avg", "paeth", "all"; "auto", "default", "filtered", "rle",
// "huffman", "fast". Parsing is case-sensitive and also takes "average" and "deflate".
[[nodiscard]] std::string_view to_string(PngFilter filter) noexcept;
[[nodiscard]] std::string_view to_string(PngStrategy strategy) noexcept;
[[nodiscard]] std::optional<PngFilter> parse_png_filter(std::string_view name);
[[nodiscard]] std::optional<PngStrategy> parse_png_strategy(std::string_view name);

struct PngWriteOptions {
  int compression = 6;      // 0 stores, 1 is the fastest compression, 9 the smallest
  bool interlaced = false;  // Adam7
  PngFilter filter = PngFilter::automatic;
  PngStrategy strategy = PngStrategy::automatic;
};

// What encode_png does for `options`, never automatic. Automatic choices, measured on 8-bit
// gray photos and flat graphics (docs/image-io.md; the same for every layout, since Image
// has no palette or sub-byte depth, where libpng recommends no filter):
//   level 0   filter none, stored        (filtering cannot pay without compression)
//   level 1   filter up,   fast          (rle when interlaced; docs/image-io.md)
//   level 2   filter all,  rle           (smaller again on photos and flat graphics)
//   level 3-9 filter all,  filtered      (libpng's defaults: zlib's string matching, which
//                                         pays on repeats such as text, not on photo grain)
// Lossless whatever the choice. Throws std::invalid_argument for a level outside 0-9, and
// for `fast` with the filter `all` or with interlacing.
struct PngEncoding {
  PngFilter filter;
  PngStrategy strategy;
  int level;
};
[[nodiscard]] PngEncoding resolve_png_encoding(const PngWriteOptions& options);

// Any valid Image. Throws std::invalid_argument for an invalid one.
[[nodiscard]] std::vector<std::byte> encode_png(const Image& image, const PngWriteOptions& options = {});
// 8-bit gray or RGB only (JPEG has no alpha and no 16-bit baseline); quality 1-100.
// Throws std::invalid_argument otherwise.
[[nodiscard]] std::vector<std::byte> encode_jpeg(const Image& image, int quality = 90);

// Encodes and writes through write_file_atomically (temp file + rename). With
// Overwrite::refuse an existing file is an error and is left untouched. `png` applies to
// PNG output only.
void write_image(const std::filesystem::path& path, const Image& image, ImageFormat format,
                 int jpeg_quality = 90, Overwrite overwrite = Overwrite::refuse, const PngWriteOptions& png = {});

}  // namespace streampipe::io
