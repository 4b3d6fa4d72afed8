// SPDX-License-Identifier: Apache-2.0
#pragma once
// Hand-made hostile image files for the decoders' limit tests: PNGs assembled chunk by chunk
// (with correct CRCs, so only the claim under test is wrong), JPEGs with patched frame
// headers or cut short, progressive JPEGs with many scans; and the process's peak resident
// memory, to show that a refusal came before any large allocation.

#include "jpeg_recipes.hpp"

#include "streampipe/io/image.hpp"

#include <gtest/gtest.h>
#include <sys/resource.h>
#include <zlib.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace streampipe::io::testing {

using Bytes = std::vector<std::byte>;

inline void put_be32(Bytes& out, std::uint32_t v) {
  for (int shift = 24; shift >= 0; shift -= 8) out.push_back(static_cast<std::byte>((v >> shift) & 0xff));
}

// A chunk whose length field says `declared` (the data's own size unless given), CRC right.
inline Bytes png_chunk(const char (&type)[5], const Bytes& data, std::int64_t declared = -1) {
  Bytes out;
  put_be32(out, static_cast<std::uint32_t>(declared < 0 ? static_cast<std::int64_t>(data.size()) : declared));
  Bytes body;
  for (int i = 0; i < 4; ++i) body.push_back(static_cast<std::byte>(type[i]));
  body.insert(body.end(), data.begin(), data.end());
  out.insert(out.end(), body.begin(), body.end());
  put_be32(out, static_cast<std::uint32_t>(crc32(0, reinterpret_cast<const Bytef*>(body.data()),
                                                 static_cast<uInt>(body.size()))));
  return out;
}

inline Bytes png_signature() {
  const unsigned char sig[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
  Bytes out;
  for (unsigned char c : sig) out.push_back(static_cast<std::byte>(c));
  return out;
}

// IHDR: color type 0 gray, 2 RGB, 6 RGBA...; no interlace.
inline Bytes png_ihdr(std::uint32_t width, std::uint32_t height, int depth, int color_type) {
  Bytes data;
  put_be32(data, width);
  put_be32(data, height);
  data.push_back(static_cast<std::byte>(depth));
  data.push_back(static_cast<std::byte>(color_type));
  data.push_back(std::byte{0});  // deflate
  data.push_back(std::byte{0});  // adaptive filtering
  data.push_back(std::byte{0});  // no interlace
  return png_chunk("IHDR", data);
}

inline Bytes zlib_compress(const Bytes& raw) {
  uLongf size = compressBound(static_cast<uLong>(raw.size()));
  Bytes out(size);
  EXPECT_EQ(compress2(reinterpret_cast<Bytef*>(out.data()), &size, reinterpret_cast<const Bytef*>(raw.data()),
                      static_cast<uLong>(raw.size()), 9),
            Z_OK);
  out.resize(size);
  return out;
}

inline Bytes concat(std::initializer_list<Bytes> parts) {
  Bytes out;
  for (const auto& p : parts) out.insert(out.end(), p.begin(), p.end());
  return out;
}

// A valid PNG file with `chunks` inserted right after its IHDR (before any image data).
inline Bytes with_chunks_after_ihdr(const Bytes& png, const Bytes& chunks) {
  Bytes out(png.begin(), png.begin() + 33);  // signature (8) + IHDR (25)
  out.insert(out.end(), chunks.begin(), chunks.end());
  out.insert(out.end(), png.begin() + 33, png.end());
  return out;
}

// The first SOFn's height and width replaced.
inline Bytes with_jpeg_size(Bytes jpeg, std::uint16_t width, std::uint16_t height) {
  for (std::size_t i = 2; i + 8 < jpeg.size(); ++i) {
    const auto m = std::to_integer<unsigned>(jpeg[i + 1]);
    if (jpeg[i] == std::byte{0xFF} && (m == 0xC0 || m == 0xC1 || m == 0xC2)) {
      jpeg[i + 5] = static_cast<std::byte>(height >> 8);
      jpeg[i + 6] = static_cast<std::byte>(height & 0xff);
      jpeg[i + 7] = static_cast<std::byte>(width >> 8);
      jpeg[i + 8] = static_cast<std::byte>(width & 0xff);
      return jpeg;
    }
  }
  ADD_FAILURE() << "no frame header";
  return jpeg;
}

// A progressive JPEG of smooth RGB content (libjpeg's standard script: 10 scans for YCbCr).
inline Bytes progressive_jpeg(std::uint32_t w, std::uint32_t h) {
  std::vector<unsigned char> rgb(std::size_t{w} * h * 3);
  for (std::size_t y = 0; y < h; ++y)
    for (std::size_t x = 0; x < std::size_t{w} * 3; ++x) rgb[y * w * 3 + x] = static_cast<unsigned char>(x + y);
  return compress_jpeg(rgb.data(), w, h, 3, JCS_RGB, {"progressive", JCS_YCbCr, 2, 2, true, 0, false, 75});
}

// The most resident memory this process has had, in MiB.
inline double peak_rss_mib() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_maxrss) / 1024.0;  // Linux reports KiB
}

}  // namespace streampipe::io::testing
