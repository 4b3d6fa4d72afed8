// SPDX-License-Identifier: Apache-2.0
// JPEG through libjpeg-turbo. libjpeg's default error_exit calls exit(); ours longjmps back
// to the setjmp in the function that called into the library. As with PNG, the functions
// that call setjmp hold only trivially destructible locals; C++ objects live in callers.
// libjpeg only warns about corrupt entropy-coded data: a file cut short, even one that still
// ends with its EOI marker, decodes with the rest of the image flat gray. Here the warnings
// that mean lost or wrong pixels are errors. Asked for luma (ImageReadOptions::jpeg_luma), a
// YCbCr file is decoded to JCS_GRAYSCALE: libjpeg-turbo then marks the chroma components
// unneeded, so it entropy-decodes them but never transforms, upsamples or converts them.

#include "image_codecs.hpp"

#include "streampipe/io/decode_budget.hpp"

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
  char message[JMSG_LENGTH_MAX + 32];
};

[[noreturn]] void on_jpeg_error(j_common_ptr cinfo) {
  auto* error = reinterpret_cast<JpegError*>(cinfo->err);
  (*cinfo->err->format_message)(cinfo, error->message);
  std::longjmp(error->jump, 1);
}

// Warnings that mean the decoded pixels are not the file's: data missing (a premature end,
// or a marker inside a scan), undecodable entropy codes, lost restart markers, scans out of
// order. The others leave the pixels complete and are common in files that decode fine:
// bytes between segments (JWRN_EXTRANEOUS_DATA), an unknown Adobe transform or JFIF version.
bool loses_pixels(int code) noexcept {
  switch (code) {
    case JWRN_JPEG_EOF:
    case JWRN_HIT_MARKER:
    case JWRN_HUFF_BAD_CODE:
    case JWRN_ARITH_BAD_CODE:
    case JWRN_MUST_RESYNC:
    case JWRN_BOGUS_PROGRESSION:
      return true;
    default:
      return false;
  }
}

void on_jpeg_message(j_common_ptr cinfo, int level) {
  if (level >= 0) return;  // trace messages
  const int code = cinfo->err->msg_code;
  if (!loses_pixels(code)) return;
  auto* error = reinterpret_cast<JpegError*>(cinfo->err);
  (*cinfo->err->format_message)(cinfo, error->message);
  if (code == JWRN_JPEG_EOF || code == JWRN_HIT_MARKER)
    std::strncat(error->message, " (truncated file)", sizeof(error->message) - std::strlen(error->message) - 1);
  std::longjmp(error->jump, 1);
}

// Called by libjpeg as it reads; holds multi-scan files to DecodeLimits::max_jpeg_scans.
struct JpegProgress {
  jpeg_progress_mgr mgr;  // first member: libjpeg hands us a pointer to it
  int max_scans = 0;      // 0: no limit
};

void on_jpeg_progress(j_common_ptr cinfo) {
  const auto* progress = reinterpret_cast<const JpegProgress*>(cinfo->progress);
  if (cinfo->is_decompressor == 0 || progress->max_scans <= 0) return;
  if (reinterpret_cast<j_decompress_ptr>(cinfo)->input_scan_number <= progress->max_scans) return;
  auto* error = reinterpret_cast<JpegError*>(cinfo->err);
  std::snprintf(error->message, sizeof(error->message), "more than %d scans (DecodeLimits::max_jpeg_scans)",
                progress->max_scans);
  std::longjmp(error->jump, 1);
}

struct JpegReadState {
  jpeg_decompress_struct cinfo;
  JpegError error;
  JpegProgress progress;
  bool created = false;
  bool cmyk = false;
  bool adobe_inverted = false;
  bool arithmetic = false;
  bool luma = false;  // asked for: YCbCr files decode to their Y plane
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
  s.progress.mgr.progress_monitor = on_jpeg_progress;
  s.cinfo.progress = &s.progress.mgr;
  jpeg_mem_src(&s.cinfo, data, size);
  jpeg_read_header(&s.cinfo, TRUE);
  switch (s.cinfo.jpeg_color_space) {
    case JCS_GRAYSCALE:
      s.cinfo.out_color_space = JCS_GRAYSCALE;
      break;
    case JCS_YCbCr:
      s.cinfo.out_color_space = s.luma ? JCS_GRAYSCALE : JCS_RGB;
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
  s.arithmetic = s.cinfo.arith_code != 0;
  jpeg_calc_output_dimensions(&s.cinfo);
  s.width = s.cinfo.output_width;
  s.height = s.cinfo.output_height;
  s.components = s.cinfo.output_components;
  return true;
}

// Adobe CMYK JPEGs (Photoshop, libjpeg with its Adobe marker) store inverted inks:
// 255 means no ink. Without the marker the values are plain inks.
void cmyk_to_rgb(const unsigned char* cmyk, unsigned char* rgb, std::size_t pixels, bool inverted) noexcept {
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

// Rows of `row_bytes` into `out`. CMYK goes through `cmyk_row` (one row, 4 bytes a pixel)
// and becomes RGB row by row, so no CMYK copy of the image is held.
bool jpeg_read_pixels_phase(JpegReadState& s, unsigned char* out, std::size_t row_bytes, unsigned char* cmyk_row) {
  if (setjmp(s.error.jump)) return false;
  jpeg_start_decompress(&s.cinfo);
  while (s.cinfo.output_scanline < s.cinfo.output_height) {
    unsigned char* target = out + static_cast<std::size_t>(s.cinfo.output_scanline) * row_bytes;
    JSAMPROW row = cmyk_row != nullptr ? cmyk_row : target;
    jpeg_read_scanlines(&s.cinfo, &row, 1);
    if (cmyk_row != nullptr) cmyk_to_rgb(cmyk_row, target, s.cinfo.output_width, s.adobe_inverted);
  }
  jpeg_finish_decompress(&s.cinfo);
  return true;
}

// Huffman coding spends at least one bit on every 8x8 block of every component in some scan
// (a DC code has at least one bit), and the first component covers the image with blocks of
// at most 32x32 pixels (sampling factors reach 4). A file smaller than that cannot be the
// image it declares. Arithmetic coding has no such floor.
bool jpeg_data_can_hold(std::uint64_t file_bytes, std::uint64_t width, std::uint64_t height) noexcept {
  const std::uint64_t regions = ((width + 31) / 32) * ((height + 31) / 32);
  return regions <= file_bytes * 8;
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
  s.progress.max_scans = options.limits.max_jpeg_scans;
  s.luma = options.jpeg_luma;
  if (!jpeg_read_header_phase(s, reinterpret_cast<const unsigned char*>(data.data()),
                              static_cast<unsigned long>(data.size())))
    throw ImageError(source, fmt::format("JPEG: {}", s.error.message));
  if (s.components != 1 && s.components != 3 && s.components != 4)
    throw ImageError(source, fmt::format("JPEG: unsupported {} output components", s.components));
  options.limits.check(s.width, s.height, source);
  if (!s.arithmetic && !jpeg_data_can_hold(data.size(), s.width, s.height))
    throw ImageError(source, fmt::format("JPEG: {} bytes cannot hold a {}x{} image (Huffman coding spends at least "
                                         "a bit on each 8x8 block): truncated file or patched dimensions",
                                         data.size(), s.width, s.height));
  const int channels = s.cmyk ? 3 : s.components;
  check_decoded_size(s.width, s.height, static_cast<std::uint64_t>(channels), options.max_bytes, source);
  std::shared_ptr<const void> reservation;
  if (options.limits.budget)
    reservation = options.limits.budget->reserve(std::uint64_t{s.width} * s.height * static_cast<std::uint64_t>(channels),
                                                 source);
  Image image = Image::make(s.width, s.height, channels, 8);
  image.reservation = std::move(reservation);
  std::vector<unsigned char> cmyk_row(s.cmyk ? std::size_t{s.width} * 4 : 0);
  if (!jpeg_read_pixels_phase(s, image.pixels.data(), image.row_bytes(), s.cmyk ? cmyk_row.data() : nullptr))
    throw ImageError(source, fmt::format("JPEG: {}", s.error.message));
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
