// SPDX-License-Identifier: Apache-2.0
// JPEG through libjpeg-turbo. libjpeg's default error_exit calls exit(); ours longjmps back
// to the setjmp in the function that called into the library. As with PNG, the functions
// that call setjmp hold only trivially destructible locals; C++ objects live in callers.
// A truncated file is only a warning to libjpeg (it pads with gray); here it is an error.

#include "image_codecs.hpp"

#include <fmt/format.h>

#include <csetjmp>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include <jpeglib.h>
#include <jerror.h>

namespace streampipe::io {
namespace {

struct JpegError {
  jpeg_error_mgr mgr;  // first member: libjpeg hands us a pointer to it
  std::jmp_buf jump;
  char message[JMSG_LENGTH_MAX];
};

[[noreturn]] void on_jpeg_error(j_common_ptr cinfo) {
  auto* error = reinterpret_cast<JpegError*>(cinfo->err);
  (*cinfo->err->format_message)(cinfo, error->message);
  std::longjmp(error->jump, 1);
}

void on_jpeg_message(j_common_ptr cinfo, int level) {
  if (level >= 0) return;  // trace messages
  auto* error = reinterpret_cast<JpegError*>(cinfo->err);
  if (cinfo->err->msg_code == JWRN_JPEG_EOF) {
    (*cinfo->err->format_message)(cinfo, error->message);
    std::strncat(error->message, " (truncated file)", sizeof(error->message) - std::strlen(error->message) - 1);
    std::longjmp(error->jump, 1);
  }
  // Other corrupt-data warnings (extraneous bytes, ...) are common in files that decode
  // fine; they are tolerated.
}

struct JpegReadState {
  jpeg_decompress_struct cinfo;
  JpegError error;
  bool created = false;
  bool cmyk = false;
  bool adobe_inverted = false;
  JDIMENSION width = 0, height = 0;
  int components = 0;
};

struct JpegReadGuard {
  JpegReadState& s;
  ~JpegReadGuard() {
    if (s.created) jpeg_destroy_decompress(&s.cinfo);
  }
};

bool jpeg_read_header_phase(JpegReadState& s, const unsigned char* data, unsigned long size) {
  s.cinfo.err = jpeg_std_error(&s.error.mgr);
  s.error.mgr.error_exit = on_jpeg_error;
  s.error.mgr.emit_message = on_jpeg_message;
  s.error.message[0] = '\0';
  if (setjmp(s.error.jump)) return false;
  jpeg_create_decompress(&s.cinfo);
  s.created = true;
  jpeg_mem_src(&s.cinfo, data, size);
  jpeg_read_header(&s.cinfo, TRUE);
  switch (s.cinfo.jpeg_color_space) {
    case JCS_GRAYSCALE:
      s.cinfo.out_color_space = JCS_GRAYSCALE;
      break;
    case JCS_CMYK:
    case JCS_YCCK:
      s.cinfo.out_color_space = JCS_CMYK;
      s.cmyk = true;
      s.adobe_inverted = s.cinfo.saw_Adobe_marker != 0;
      break;
    default:
      s.cinfo.out_color_space = JCS_RGB;
      break;
  }
  jpeg_calc_output_dimensions(&s.cinfo);
  s.width = s.cinfo.output_width;
  s.height = s.cinfo.output_height;
  s.components = s.cinfo.output_components;
  return true;
}

bool jpeg_read_pixels_phase(JpegReadState& s, unsigned char* out, std::size_t row_bytes) {
  if (setjmp(s.error.jump)) return false;
  jpeg_start_decompress(&s.cinfo);
  while (s.cinfo.output_scanline < s.cinfo.output_height) {
    JSAMPROW row = out + static_cast<std::size_t>(s.cinfo.output_scanline) * row_bytes;
    jpeg_read_scanlines(&s.cinfo, &row, 1);
  }
  jpeg_finish_decompress(&s.cinfo);
  return true;
}

// Adobe CMYK JPEGs (Photoshop, libjpeg with its Adobe marker) store inverted inks:
// 255 means no ink. Without the marker the values are plain inks.
void cmyk_to_rgb(const unsigned char* cmyk, unsigned char* rgb, std::size_t pixels, bool inverted) {
  for (std::size_t i = 0; i < pixels; ++i) {
    unsigned c = cmyk[4 * i], m = cmyk[4 * i + 1], y = cmyk[4 * i + 2], k = cmyk[4 * i + 3];
    if (!inverted) {
      c = 255 - c;
      m = 255 - m;
      y = 255 - y;
      k = 255 - k;
    }
    rgb[3 * i] = static_cast<unsigned char>((c * k + 127) / 255);
    rgb[3 * i + 1] = static_cast<unsigned char>((m * k + 127) / 255);
    rgb[3 * i + 2] = static_cast<unsigned char>((y * k + 127) / 255);
  }
}

struct JpegWriteState {
  jpeg_compress_struct cinfo;
  JpegError error;
  bool created = false;
  unsigned char* buffer = nullptr;  // malloc'd by jpeg_mem_dest
  unsigned long size = 0;
};

struct JpegWriteGuard {
  JpegWriteState& s;
  ~JpegWriteGuard() {
    if (s.created) jpeg_destroy_compress(&s.cinfo);
    std::free(s.buffer);
  }
};

bool jpeg_write_phase(JpegWriteState& s, const Image& image, int quality) {
  s.cinfo.err = jpeg_std_error(&s.error.mgr);
  s.error.mgr.error_exit = on_jpeg_error;
  s.error.message[0] = '\0';
  if (setjmp(s.error.jump)) return false;
  jpeg_create_compress(&s.cinfo);
  s.created = true;
  jpeg_mem_dest(&s.cinfo, &s.buffer, &s.size);
  s.cinfo.image_width = image.width;
  s.cinfo.image_height = image.height;
  s.cinfo.input_components = image.channels;
  s.cinfo.in_color_space = image.channels == 1 ? JCS_GRAYSCALE : JCS_RGB;
  jpeg_set_defaults(&s.cinfo);
  jpeg_set_quality(&s.cinfo, quality, TRUE);
  jpeg_start_compress(&s.cinfo, TRUE);
  const std::size_t row_bytes = image.row_bytes();
  while (s.cinfo.next_scanline < s.cinfo.image_height) {
    // libjpeg takes non-const rows but only reads them when compressing.
    JSAMPROW row = const_cast<unsigned char*>(image.pixels.data()) + s.cinfo.next_scanline * row_bytes;
    jpeg_write_scanlines(&s.cinfo, &row, 1);
  }
  jpeg_finish_compress(&s.cinfo);
  return true;
}

}  // namespace

namespace detail {

Image decode_jpeg(std::span<const std::byte> data, const ImageReadOptions& options, const std::string& source) {
  JpegReadState s;
  JpegReadGuard guard{s};
  if (!jpeg_read_header_phase(s, reinterpret_cast<const unsigned char*>(data.data()),
                              static_cast<unsigned long>(data.size())))
    throw ImageError(source, fmt::format("JPEG: {}", s.error.message));
  if (s.components != 1 && s.components != 3 && s.components != 4)
    throw ImageError(source, fmt::format("JPEG: unsupported {} output components", s.components));
  check_decoded_size(s.width, s.height, static_cast<std::uint64_t>(s.components), options.max_bytes, source);
  if (!s.cmyk) {
    Image image = Image::make(s.width, s.height, s.components, 8);
    if (!jpeg_read_pixels_phase(s, image.pixels.data(), image.row_bytes()))
      throw ImageError(source, fmt::format("JPEG: {}", s.error.message));
    return image;
  }
  std::vector<unsigned char> cmyk(std::size_t{s.width} * s.height * 4);
  if (!jpeg_read_pixels_phase(s, cmyk.data(), std::size_t{s.width} * 4))
    throw ImageError(source, fmt::format("JPEG: {}", s.error.message));
  Image image = Image::make(s.width, s.height, 3, 8);
  cmyk_to_rgb(cmyk.data(), image.pixels.data(), std::size_t{s.width} * s.height, s.adobe_inverted);
  return image;
}

}  // namespace detail

std::vector<std::byte> encode_jpeg(const Image& image, int quality) {
  image.validate();
  if (image.bit_depth != 8)
    throw std::invalid_argument("JPEG output needs 8-bit samples (this image has 16)");
  if (image.channels != 1 && image.channels != 3)
    throw std::invalid_argument(fmt::format(
        "JPEG output needs gray or RGB; this image has {} channels (JPEG has no alpha)", image.channels));
  if (quality < 1 || quality > 100)
    throw std::invalid_argument(fmt::format("JPEG quality {} is not in 1-100", quality));
  JpegWriteState s;
  JpegWriteGuard guard{s};
  if (!jpeg_write_phase(s, image, quality))
    throw std::runtime_error(fmt::format("JPEG encoding failed: {}", s.error.message));
  const auto* begin = reinterpret_cast<const std::byte*>(s.buffer);
  return {begin, begin + s.size};
}

}  // namespace streampipe::io
