// SPDX-License-Identifier: Apache-2.0
#include "streampipe/io/image.hpp"

#include "image_codecs.hpp"

#include "streampipe/io/decode_budget.hpp"
#include "streampipe/io/jpeg_header.hpp"
#include "streampipe/host/read_file.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <system_error>
#include <limits>

namespace streampipe::io {

std::string_view to_string(ImageFormat format) noexcept {
  return format == ImageFormat::png ? "png" : "jpeg";
}

std::optional<ImageFormat> parse_image_format(std::string_view name) {
  std::string lower(name);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (lower == "png") return ImageFormat::png;
  if (lower == "jpeg" || lower == "jpg") return ImageFormat::jpeg;
  return std::nullopt;
}

Image Image::make(std::uint32_t width, std::uint32_t height, int channels, int bit_depth) {
  if (channels < 1 || channels > 4)
    throw std::invalid_argument(fmt::format("an image has 1 to 4 channels, not {}", channels));
  if (bit_depth != 8 && bit_depth != 16)
    throw std::invalid_argument(fmt::format("an image has 8 or 16 bits per sample, not {}", bit_depth));
  Image image;
  image.width = width;
  image.height = height;
  image.channels = channels;
  image.bit_depth = bit_depth;
  const std::uint64_t bytes = std::uint64_t{width} * height * image.bytes_per_pixel();
  if (bytes > std::numeric_limits<std::size_t>::max() / 2)
    throw std::invalid_argument(fmt::format("a {}x{} image is too large", width, height));
  try {
    image.pixels.assign(static_cast<std::size_t>(bytes), 0);
  } catch (const std::bad_alloc&) {
    static constexpr const char* layouts[] = {"", "gray", "gray+alpha", "RGB", "RGBA"};
    throw AllocationError(bytes, fmt::format("a {}x{} {} image at {} bits", width, height, layouts[channels],
                                             bit_depth));
  }
  return image;
}

void Image::validate() const {
  if (channels < 1 || channels > 4)
    throw std::invalid_argument(fmt::format("invalid image: {} channels (1 to 4)", channels));
  if (bit_depth != 8 && bit_depth != 16)
    throw std::invalid_argument(fmt::format("invalid image: bit depth {} (8 or 16)", bit_depth));
  if (width == 0 || height == 0)
    throw std::invalid_argument(fmt::format("invalid image: empty ({}x{})", width, height));
  if (pixels.size() != size_bytes())
    throw std::invalid_argument(fmt::format("invalid image: {}x{}x{} at {} bits needs {} bytes, has {}",
                                            width, height, channels, bit_depth, size_bytes(),
                                            pixels.size()));
}

ImageError::ImageError(std::string source, std::string reason, int error_number)
    : std::runtime_error(fmt::format("{}: {}", source, reason)),
      source_(std::move(source)),
      reason_(std::move(reason)),
      error_number_(error_number) {}

std::optional<ImageFormat> detect_image_format(std::span<const std::byte> data) noexcept {
  static constexpr unsigned char png_magic[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
  if (data.size() >= 8 && std::memcmp(data.data(), png_magic, 8) == 0) return ImageFormat::png;
  // SOI followed by the first marker's 0xFF.
  if (data.size() >= 3 && data[0] == std::byte{0xff} && data[1] == std::byte{0xd8} &&
      data[2] == std::byte{0xff})
    return ImageFormat::jpeg;
  return std::nullopt;
}

std::optional<ImageHeader> read_image_header(std::span<const std::byte> data) noexcept {
  const auto format = detect_image_format(data);
  if (!format) return std::nullopt;
  ImageHeader h;
  h.format = *format;
  if (*format == ImageFormat::jpeg) {
    const auto jpeg = read_jpeg_header(data);
    if (!jpeg || jpeg->components < 1) return std::nullopt;
    h.width = jpeg->width;
    h.height = jpeg->height;
    h.channels = jpeg->components == 1 ? 1 : 3;  // CMYK/YCCK decode to RGB
    h.bit_depth = 8;
    return h;
  }
  // Signature, IHDR's length and type, then width, height, bit depth and colour type.
  if (data.size() < 26 || std::memcmp(data.data() + 12, "IHDR", 4) != 0) return std::nullopt;
  const auto be32 = [&](std::size_t at) {
    std::uint32_t v = 0;
    for (std::size_t i = 0; i < 4; ++i) v = v << 8 | std::to_integer<std::uint32_t>(data[at + i]);
    return v;
  };
  h.width = be32(16);
  h.height = be32(20);
  const int depth = std::to_integer<int>(data[24]), colour = std::to_integer<int>(data[25]);
  h.bit_depth = depth == 16 ? 16 : 8;
  switch (colour) {
    case 0: h.channels = 1; break;
    case 2: case 3: h.channels = 3; break;
    case 4: h.channels = 2; break;
    case 6: h.channels = 4; break;
    default: return std::nullopt;
  }
  return h;
}

void check_image_head(std::span<const std::byte> head, std::uint64_t size, const std::string& source) {
  if (size == 0) throw ImageError(source, "empty file");
  if (!detect_image_format(head)) throw ImageError(source, "not a PNG or JPEG file (unrecognized signature)");
}

Image decode_image(std::span<const std::byte> data, const ImageReadOptions& options,
                   std::string_view source) {
  const std::string name(source);
  check_image_head(data, data.size(), name);
  // A JPEG's decoder takes its budget itself: only libjpeg's reading of the colour space
  // says whether jpeg_luma gives one channel or three.
  if (*detect_image_format(data) == ImageFormat::jpeg) return detail::decode_jpeg(data, options, name);
  // The budget is taken from the header, after the limits it must pass (the decoder checks
  // them again, with the rest of the header).
  std::shared_ptr<const void> reservation;
  if (options.limits.budget) {
    if (const auto h = read_image_header(data); h && h->width > 0 && h->height > 0) {
      options.limits.check(h->width, h->height, name);
      reservation = options.limits.budget->reserve(
          std::uint64_t{h->width} * h->height * static_cast<std::uint64_t>(h->channels) * (h->bit_depth / 8), name);
    }
  }
  Image image = detail::decode_png(data, options, name);
  image.reservation = std::move(reservation);
  return image;
}

Image read_image(const std::filesystem::path& path, const ImageReadOptions& options) {
  const std::string name = path.string();
  std::vector<std::byte> data;
  try {
    data = host::read_regular_file(path, [&](std::span<const std::byte> head, std::uint64_t size) {
      check_image_head(head, size, name);
    });
  } catch (const host::ReadFileError& e) {
    throw ImageError(name, e.reason(), e.error_number());
  }
  return decode_image(data, options, name);
}

void write_image(const std::filesystem::path& path, const Image& image, ImageFormat format,
                 int jpeg_quality, Overwrite overwrite, const PngWriteOptions& png) {
  if (overwrite == Overwrite::refuse && std::filesystem::exists(path))
    throw std::runtime_error(fmt::format("{}: exists (not overwritten)", path.string()));
  const auto bytes = format == ImageFormat::png ? encode_png(image, png) : encode_jpeg(image, jpeg_quality);
  host::write_file_atomically(path, bytes, overwrite);
}

namespace detail {

void check_decoded_size(std::uint64_t width, std::uint64_t height, std::uint64_t bytes_per_pixel,
                        std::size_t max_bytes, const std::string& source) {
  if (width == 0 || height == 0) throw ImageError(source, fmt::format("empty image ({}x{})", width, height));
  // width, height < 2^32 and bytes_per_pixel <= 8: the product fits in 67 bits only in
  // theory; divide first.
  if (width > max_bytes / bytes_per_pixel / height)
    throw ImageError(source, fmt::format("{}x{} image of {} bytes per pixel exceeds the limit of {} bytes",
                                         width, height, bytes_per_pixel, max_bytes));
}

}  // namespace detail
}  // namespace streampipe::io
