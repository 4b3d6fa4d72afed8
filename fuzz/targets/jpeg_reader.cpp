// SPDX-License-Identifier: Apache-2.0
// Fuzz target: the JPEG reader (io::decode_image on libjpeg-turbo) and the marker walk that
// decides what goes to nvJPEG (io::read_jpeg_header). Any input must decode to a valid
// Image or throw ImageError; the marker walk must never fail otherwise; when both read a
// file, they agree on its size.

#include "streampipe/io/image.hpp"
#include "streampipe/io/jpeg_header.hpp"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <span>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace streampipe::io;
  const std::span<const std::byte> bytes(reinterpret_cast<const std::byte*>(data), size);
  const std::optional<JpegHeader> header = read_jpeg_header(bytes);
  ImageReadOptions options;
  // 4 Mpixel and 100 scans: every structure, at milliseconds per input under the sanitizers.
  options.limits.max_pixels = std::uint64_t{1} << 22;
  options.limits.max_jpeg_scans = 100;
  Image image;
  try {
    image = decode_image(bytes, options, "fuzz.jpg");
  } catch (const ImageError&) {
    return 0;
  }
  image.validate();
  if (image.bit_depth != 8 || (image.channels != 1 && image.channels != 3)) std::abort();
  if (header && header->height != 0 && (header->width != image.width || header->height != image.height)) std::abort();
  return 0;
}
