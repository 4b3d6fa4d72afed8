// SPDX-License-Identifier: Apache-2.0
#include "bad_inputs.hpp"

#include "streampipe/io/image.hpp"

#include <zlib.h>

#include <algorithm>
#include <fstream>
#include <random>
#include <stdexcept>
#include <vector>

namespace streampipe::testing {

namespace fs = std::filesystem;

namespace {

io::Image random_image(std::uint32_t width, std::uint32_t height) {
  auto img = io::Image::make(width, height, 3);
  std::mt19937 rng(width * 131 + height);
  for (auto& p : img.pixels) p = static_cast<std::uint8_t>(rng());
  return img;
}

void write_bytes(const fs::path& path, const std::vector<std::byte>& bytes) {
  if (path.has_parent_path()) fs::create_directories(path.parent_path());
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  if (!out) throw std::runtime_error("cannot write " + path.string());
}

void put32(std::vector<std::byte>& v, std::uint32_t x) {
  for (int shift = 24; shift >= 0; shift -= 8) v.push_back(static_cast<std::byte>((x >> shift) & 0xff));
}

// A PNG chunk: length, type, data, CRC over type and data.
void chunk(std::vector<std::byte>& png, const char* type, const std::vector<std::byte>& data) {
  put32(png, static_cast<std::uint32_t>(data.size()));
  const std::size_t at = png.size();
  for (int i = 0; i < 4; ++i) png.push_back(static_cast<std::byte>(type[i]));
  png.insert(png.end(), data.begin(), data.end());
  const auto* crc_begin = reinterpret_cast<const Bytef*>(png.data() + at);
  put32(png, static_cast<std::uint32_t>(::crc32(0, crc_begin, static_cast<uInt>(png.size() - at))));
}

}  // namespace

void write_png(const fs::path& path, std::uint32_t width, std::uint32_t height) {
  write_bytes(path, io::encode_png(random_image(width, height)));
}

void write_jpeg(const fs::path& path, std::uint32_t width, std::uint32_t height) {
  write_bytes(path, io::encode_jpeg(random_image(width, height), 90));
}

void write_truncated_png(const fs::path& path, std::size_t bytes) {
  auto png = io::encode_png(random_image(40, 30));
  png.resize(std::min(bytes, png.size() - 1));
  write_bytes(path, png);
}

void write_truncated_jpeg(const fs::path& path) {
  auto jpeg = io::encode_jpeg(random_image(64, 48), 90);
  jpeg.resize(jpeg.size() * 2 / 3);  // no end marker
  write_bytes(path, jpeg);
}

void write_png_declaring(const fs::path& path, std::uint32_t width, std::uint32_t height) {
  std::vector<std::byte> png;
  for (const int b : {0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a}) png.push_back(static_cast<std::byte>(b));
  std::vector<std::byte> ihdr;
  put32(ihdr, width);
  put32(ihdr, height);
  for (const int b : {8, 2, 0, 0, 0}) ihdr.push_back(static_cast<std::byte>(b));  // 8-bit RGB
  chunk(png, "IHDR", ihdr);
  // One zlib stream of a few zero bytes: far too little for the declared size.
  const unsigned char raw[16] = {};
  unsigned char packed[64];
  uLongf packed_size = sizeof packed;
  if (::compress(packed, &packed_size, raw, sizeof raw) != Z_OK) throw std::runtime_error("zlib compress");
  chunk(png, "IDAT",
        std::vector<std::byte>(reinterpret_cast<const std::byte*>(packed),
                               reinterpret_cast<const std::byte*>(packed) + packed_size));
  chunk(png, "IEND", {});
  write_bytes(path, png);
}

void write_jpeg_declaring(const fs::path& path, std::uint16_t width, std::uint16_t height) {
  auto jpeg = io::encode_jpeg(random_image(16, 16), 90);
  for (std::size_t i = 2; i + 9 < jpeg.size(); ++i) {
    if (jpeg[i] != std::byte{0xff} || jpeg[i + 1] != std::byte{0xc0}) continue;
    // FF C0, length (2), precision (1), height (2), width (2).
    jpeg[i + 5] = static_cast<std::byte>(height >> 8);
    jpeg[i + 6] = static_cast<std::byte>(height & 0xff);
    jpeg[i + 7] = static_cast<std::byte>(width >> 8);
    jpeg[i + 8] = static_cast<std::byte>(width & 0xff);
    write_bytes(path, jpeg);
    return;
  }
  throw std::runtime_error("no SOF0 marker in the encoded JPEG");
}

void write_png_bad_crc(const fs::path& path) {
  auto png = io::encode_png(random_image(20, 20));
  png[16 + 3] ^= std::byte{0x01};  // IHDR's width: 8 (signature) + 4 (length) + 4 (type) + 3
  write_bytes(path, png);
}

void write_text(const fs::path& path, std::string_view text) {
  write_bytes(path, std::vector<std::byte>(reinterpret_cast<const std::byte*>(text.data()),
                                           reinterpret_cast<const std::byte*>(text.data()) + text.size()));
}

}  // namespace streampipe::testing
