// SPDX-License-Identifier: Apache-2.0
#pragma once
// JPEG files made with libjpeg directly, for the variants io::encode_jpeg does not write
// (CMYK, progressive): `configure(cinfo)` adjusts libjpeg's defaults for the colour space,
// `fill_row(y, row)` writes row y's width x components samples. libjpeg's default error
// handler ends the process: the tests' data is always valid.

#include <jpeglib.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <vector>

namespace streampipe::io::testing {

template <typename Configure, typename FillRow>
std::vector<std::byte> libjpeg_compress(std::uint32_t width, std::uint32_t height, int components,
                                        J_COLOR_SPACE space, Configure&& configure, FillRow&& fill_row) {
  jpeg_compress_struct cinfo;
  jpeg_error_mgr err;
  cinfo.err = jpeg_std_error(&err);
  jpeg_create_compress(&cinfo);
  unsigned char* buffer = nullptr;
  unsigned long size = 0;
  jpeg_mem_dest(&cinfo, &buffer, &size);
  cinfo.image_width = width;
  cinfo.image_height = height;
  cinfo.input_components = components;
  cinfo.in_color_space = space;
  jpeg_set_defaults(&cinfo);
  configure(cinfo);
  jpeg_start_compress(&cinfo, TRUE);
  std::vector<unsigned char> row(std::size_t{width} * static_cast<std::size_t>(components));
  while (cinfo.next_scanline < height) {
    fill_row(cinfo.next_scanline, row.data());
    JSAMPROW p = row.data();
    jpeg_write_scanlines(&cinfo, &p, 1);
  }
  jpeg_finish_compress(&cinfo);
  jpeg_destroy_compress(&cinfo);
  std::vector<std::byte> out(reinterpret_cast<std::byte*>(buffer), reinterpret_cast<std::byte*>(buffer) + size);
  std::free(buffer);
  return out;
}

}  // namespace streampipe::io::testing
