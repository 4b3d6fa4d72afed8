// SPDX-License-Identifier: Apache-2.0
// The PNG around deflate_runs: rows in PNG's byte order (16-bit samples big-endian), one
// filter byte and the residuals per row, then signature, IHDR, IDAT chunks and IEND.

#include "png_fast_encoder.hpp"

#include <fmt/format.h>
#include <zlib.h>

#include <bit>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string_view>

namespace streampipe::io::detail {
namespace {

constexpr std::size_t kIdatChunkBytes = std::size_t{1} << 20;

int filter_type(PngFilter filter) {
  switch (filter) {
    case PngFilter::none: return 0;
    case PngFilter::sub: return 1;
    case PngFilter::up: return 2;
    case PngFilter::average: return 3;
    case PngFilter::paeth: return 4;
    case PngFilter::all:
    case PngFilter::automatic: break;
  }
  throw std::invalid_argument(fmt::format("the fast PNG encoder takes one fixed filter, not '{}'", to_string(filter)));
}

std::uint8_t paeth(int a, int b, int c) {
  const int p = a + b - c, pa = std::abs(p - a), pb = std::abs(p - b), pc = std::abs(p - c);
  return static_cast<std::uint8_t>(pa <= pb && pa <= pc ? a : pb <= pc ? b : c);
}

// One row's residuals after its filter byte. `prior` is the row above (zeros for the first).
void filter_row(int type, const std::uint8_t* raw, const std::uint8_t* prior, std::size_t n, std::size_t bpp,
                std::uint8_t* out) {
  switch (type) {
    case 0: std::memcpy(out, raw, n); return;
    case 1:
      for (std::size_t i = 0; i < n; ++i) out[i] = static_cast<std::uint8_t>(raw[i] - (i >= bpp ? raw[i - bpp] : 0));
      return;
    case 2:
      for (std::size_t i = 0; i < n; ++i) out[i] = static_cast<std::uint8_t>(raw[i] - prior[i]);
      return;
    case 3:
      for (std::size_t i = 0; i < n; ++i)
        out[i] = static_cast<std::uint8_t>(raw[i] - ((i >= bpp ? raw[i - bpp] : 0) + prior[i]) / 2);
      return;
    default:
      for (std::size_t i = 0; i < n; ++i) {
        const int left = i >= bpp ? raw[i - bpp] : 0, upper_left = i >= bpp ? prior[i - bpp] : 0;
        out[i] = static_cast<std::uint8_t>(raw[i] - paeth(left, prior[i], upper_left));
      }
  }
}

void put_u32(std::vector<std::byte>& out, std::uint32_t v) {
  for (int shift = 24; shift >= 0; shift -= 8) out.push_back(static_cast<std::byte>(v >> shift));
}

void put_chunk(std::vector<std::byte>& out, std::string_view type, const std::uint8_t* data, std::size_t n) {
  put_u32(out, static_cast<std::uint32_t>(n));
  const std::size_t start = out.size();
  for (char c : type) out.push_back(static_cast<std::byte>(c));
  if (n > 0) out.insert(out.end(), reinterpret_cast<const std::byte*>(data), reinterpret_cast<const std::byte*>(data) + n);
  const auto* chunk = reinterpret_cast<const Bytef*>(out.data() + start);
  put_u32(out, static_cast<std::uint32_t>(crc32_z(0, chunk, 4 + n)));
}

}  // namespace

std::vector<std::byte> encode_png_fast(const Image& image, PngFilter filter) {
  image.validate();
  const int type = filter_type(filter);
  const std::size_t row = image.row_bytes(), bpp = image.bytes_per_pixel();
  const bool swap = image.bit_depth == 16 && std::endian::native == std::endian::little;
  const std::size_t filtered_bytes = image.height * (row + 1);
  const auto filtered = std::make_unique_for_overwrite<std::uint8_t[]>(filtered_bytes);  // every byte written below
  std::vector<std::uint8_t> zeros(row, 0), swapped[2];
  if (swap) swapped[0].resize(row), swapped[1].resize(row);
  const std::uint8_t* prior = zeros.data();
  for (std::size_t y = 0; y < image.height; ++y) {
    const std::uint8_t* raw = image.pixels.data() + y * row;
    if (swap) {  // PNG stores 16-bit samples most significant byte first
      std::uint8_t* s = swapped[y % 2].data();
      for (std::size_t i = 0; i + 1 < row; i += 2) s[i] = raw[i + 1], s[i + 1] = raw[i];
      raw = s;
    }
    std::uint8_t* out = filtered.get() + y * (row + 1);
    out[0] = static_cast<std::uint8_t>(type);
    filter_row(type, raw, prior, row, bpp, out + 1);
    prior = raw;
  }
  const std::vector<std::uint8_t> z = deflate_runs({filtered.get(), filtered_bytes});
  return wrap_png(image.width, image.height, image.channels, image.bit_depth, z);
}

std::vector<std::byte> wrap_png(std::uint32_t width, std::uint32_t height, int channels, int bit_depth,
                                std::span<const std::uint8_t> z) {
  std::vector<std::byte> png;
  png.reserve(z.size() + (z.size() / kIdatChunkBytes + 1) * 12 + 64);
  static constexpr std::uint8_t signature[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
  for (auto b : signature) png.push_back(static_cast<std::byte>(b));
  static constexpr std::uint8_t color_types[5] = {0, 0, 4, 2, 6};  // gray, gray+alpha, RGB, RGBA
  std::uint8_t ihdr[13];
  for (int i = 0; i < 4; ++i) {
    ihdr[i] = static_cast<std::uint8_t>(width >> (24 - 8 * i));
    ihdr[4 + i] = static_cast<std::uint8_t>(height >> (24 - 8 * i));
  }
  ihdr[8] = static_cast<std::uint8_t>(bit_depth);
  ihdr[9] = color_types[channels];
  ihdr[10] = ihdr[11] = ihdr[12] = 0;  // deflate, adaptive filtering method, not interlaced
  put_chunk(png, "IHDR", ihdr, sizeof ihdr);
  for (std::size_t at = 0; at < z.size(); at += kIdatChunkBytes)
    put_chunk(png, "IDAT", z.data() + at, std::min(kIdatChunkBytes, z.size() - at));
  put_chunk(png, "IEND", nullptr, 0);
  return png;
}

}  // namespace streampipe::io::detail
