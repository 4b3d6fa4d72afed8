// SPDX-License-Identifier: Apache-2.0
#include "streampipe/io/image.hpp"

#include "image_codecs.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <fstream>
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

ImageError::ImageError(std::string source, std::string reason)
    : std::runtime_error(fmt::format("{}: {}", source, reason)),
      source_(std::move(source)),
      reason_(std::move(reason)) {}

std::optional<ImageFormat> detect_image_format(std::span<const std::byte> data) noexcept {
  static constexpr unsigned char png_magic[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
  if (data.size() >= 8 && std::memcmp(data.data(), png_magic, 8) == 0) return ImageFormat::png;
  // SOI followed by the first marker's 0xFF.
  if (data.size() >= 3 && data[0] == std::byte{0xff} && data[1] == std::byte{0xd8} &&
      data[2] == std::byte{0xff})
    return ImageFormat::jpeg;
  return std::nullopt;
}

Image decode_image(std::span<const std::byte> data, const ImageReadOptions& options,
                   std::string_view source) {
  const std::string name(source);
  if (data.empty()) throw ImageError(name, "empty file");
  const auto format = detect_image_format(data);
  if (!format) throw ImageError(name, "not a PNG or JPEG file (unrecognized signature)");
  return *format == ImageFormat::png ? detail::decode_png(data, options, name)
                                     : detail::decode_jpeg(data, options, name);
}

Image read_image(const std::filesystem::path& path, const ImageReadOptions& options) {
  const std::string name = path.string();
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) throw ImageError(name, "is a directory");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ImageError(name, fmt::format("cannot open: {}", std::generic_category().message(errno)));
  in.seekg(0, std::ios::end);
  const std::streamoff size = in.tellg();
  if (size < 0) throw ImageError(name, "cannot determine the file size");
  in.seekg(0, std::ios::beg);
  std::vector<std::byte> data(static_cast<std::size_t>(size));
  if (size > 0 && !in.read(reinterpret_cast<char*>(data.data()), size))
    throw ImageError(name, "read error");
  return decode_image(data, options, name);
}

void write_image(const std::filesystem::path& path, const Image& image, ImageFormat format,
                 int jpeg_quality, Overwrite overwrite, const PngWriteOptions& png) {
  if (overwrite == Overwrite::refuse && std::filesystem::exists(path))
    throw std::runtime_error(fmt::format("{}: exists (not overwritten)", path.string()));
  const auto bytes = format == ImageFormat::png ? encode_png(image, png) : encode_jpeg(image, jpeg_quality);
  report::write_file_atomically(path, bytes, overwrite);
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
