// SPDX-License-Identifier: Apache-2.0
#pragma once
// JPEG files of the coding choices libjpeg-turbo offers, written by the test itself: chroma
// sampling (the luma's factors, chroma at 1x1), progressive or sequential, restart markers,
// arithmetic coding, and the colour space written (YCbCr, gray, RGB with the Adobe marker's
// transform 0, CMYK and YCCK). Also photo-like content whose colours stay inside RGB's range
// after JPEG's loss, so that no decoded channel clips (docs/gray.md says why that matters).

#include "streampipe/io/image.hpp"

#include <gtest/gtest.h>
#include <jpeglib.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

namespace streampipe::io::testing {

struct JpegRecipe {
  std::string name;
  J_COLOR_SPACE written = JCS_YCbCr;  // JCS_YCbCr, JCS_GRAYSCALE, JCS_RGB, JCS_CMYK or JCS_YCCK
  int h_samp = 2, v_samp = 2;         // the luma's sampling factors (2x2: 4:2:0)
  bool progressive = false;
  int restart_rows = 0;               // restart interval in MCU rows (0: none)
  bool arithmetic = false;
  int quality = 90;
};

// The kinds above, each once, for a set of sizes.
inline std::vector<JpegRecipe> every_jpeg_recipe() {
  return {
      {"444", JCS_YCbCr, 1, 1},
      {"422", JCS_YCbCr, 2, 1},
      {"420", JCS_YCbCr, 2, 2},
      {"440", JCS_YCbCr, 1, 2},
      {"411", JCS_YCbCr, 4, 1},
      {"420-q50", JCS_YCbCr, 2, 2, false, 0, false, 50},
      {"420-progressive", JCS_YCbCr, 2, 2, true},
      {"444-progressive", JCS_YCbCr, 1, 1, true},
      {"420-restarts", JCS_YCbCr, 2, 2, false, 1},
      {"422-progressive-restarts", JCS_YCbCr, 2, 1, true, 2},
      {"420-arithmetic", JCS_YCbCr, 2, 2, false, 0, true},
      {"gray", JCS_GRAYSCALE, 1, 1},
      {"gray-progressive", JCS_GRAYSCALE, 1, 1, true},
      {"rgb-adobe", JCS_RGB, 1, 1},
      {"cmyk", JCS_CMYK, 1, 1},
      {"ycck", JCS_YCCK, 2, 2},
  };
}

// Smooth gradients, soft discs and grain, every channel within [48, 207]: JPEG's loss at
// the qualities above moves a decoded channel by far less than 48 levels, so none clips.
inline Image in_gamut_photo(std::uint32_t w, std::uint32_t h, unsigned seed) {
  Image img = Image::make(w, h, 3, 8);
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> unit(0.0f, 1.0f);
  float base[3], dx[3], dy[3], disc[3];
  for (int c = 0; c < 3; ++c) {
    base[c] = 70 + 60 * unit(rng);
    dx[c] = -40 + 80 * unit(rng);
    dy[c] = -40 + 80 * unit(rng);
    disc[c] = 60 + 130 * unit(rng);
  }
  const float cx = unit(rng) * static_cast<float>(w), cy = unit(rng) * static_cast<float>(h);
  const float r = 0.3f * static_cast<float>(std::min(w, h)) + 1;
  for (std::uint32_t y = 0; y < h; ++y)
    for (std::uint32_t x = 0; x < w; ++x) {
      const float fx = static_cast<float>(x), fy = static_cast<float>(y);
      const float in = std::clamp((r - std::hypot(fx - cx, fy - cy)) / 3.0f, 0.0f, 1.0f);
      for (int c = 0; c < 3; ++c) {
        float v = base[c] + dx[c] * fx / static_cast<float>(w) + dy[c] * fy / static_cast<float>(h);
        v = v * (1 - in) + disc[c] * in + static_cast<float>(static_cast<int>(rng() % 9) - 4);
        img.pixels[(std::size_t{y} * w + x) * 3 + static_cast<std::size_t>(c)] =
            static_cast<std::uint8_t>(std::clamp(v, 48.0f, 207.0f));
      }
    }
  return img;
}

// `samples` - width x height pixels of `components` interleaved 8-bit samples in `in_space`
// (JCS_RGB, JCS_GRAYSCALE or JCS_CMYK) - compressed as `recipe` asks.
inline std::vector<std::byte> compress_jpeg(const unsigned char* samples, std::uint32_t width, std::uint32_t height,
                                            int components, J_COLOR_SPACE in_space, const JpegRecipe& recipe) {
  jpeg_compress_struct cinfo;
  jpeg_error_mgr err;
  cinfo.err = jpeg_std_error(&err);  // default handler exits: test data is always valid
  jpeg_create_compress(&cinfo);
  unsigned char* buffer = nullptr;
  unsigned long size = 0;
  jpeg_mem_dest(&cinfo, &buffer, &size);
  cinfo.image_width = width;
  cinfo.image_height = height;
  cinfo.input_components = components;
  cinfo.in_color_space = in_space;
  jpeg_set_defaults(&cinfo);
  jpeg_set_colorspace(&cinfo, recipe.written);
  jpeg_set_quality(&cinfo, recipe.quality, TRUE);
  cinfo.comp_info[0].h_samp_factor = recipe.h_samp;
  cinfo.comp_info[0].v_samp_factor = recipe.v_samp;
  for (int c = 1; c < cinfo.num_components; ++c) {
    // YCCK's K is a luma-like channel: sampled as Y.
    const bool full = recipe.written == JCS_YCCK && c == 3;
    cinfo.comp_info[c].h_samp_factor = full ? recipe.h_samp : 1;
    cinfo.comp_info[c].v_samp_factor = full ? recipe.v_samp : 1;
  }
  cinfo.restart_in_rows = recipe.restart_rows;
  cinfo.arith_code = recipe.arithmetic ? TRUE : FALSE;
  if (recipe.progressive) jpeg_simple_progression(&cinfo);
  jpeg_start_compress(&cinfo, TRUE);
  const std::size_t row_bytes = std::size_t{width} * static_cast<std::size_t>(components);
  while (cinfo.next_scanline < cinfo.image_height) {
    // libjpeg takes non-const rows but only reads them when compressing.
    JSAMPROW row = const_cast<unsigned char*>(samples) + std::size_t{cinfo.next_scanline} * row_bytes;
    jpeg_write_scanlines(&cinfo, &row, 1);
  }
  jpeg_finish_compress(&cinfo);
  jpeg_destroy_compress(&cinfo);
  std::vector<std::byte> out(reinterpret_cast<std::byte*>(buffer), reinterpret_cast<std::byte*>(buffer) + size);
  std::free(buffer);
  return out;
}

// `rgb` (8-bit RGB) written as `recipe` asks: gray as its BT.601 luma, CMYK as inverted inks
// with no black (the Adobe convention libjpeg writes, so it decodes back to the same RGB).
inline std::vector<std::byte> write_jpeg_recipe(const Image& rgb, const JpegRecipe& recipe) {
  const std::size_t pixels = std::size_t{rgb.width} * rgb.height;
  if (recipe.written == JCS_GRAYSCALE) {
    std::vector<unsigned char> gray(pixels);
    for (std::size_t i = 0; i < pixels; ++i)
      gray[i] = static_cast<unsigned char>(
          (4899u * rgb.pixels[3 * i] + 9617u * rgb.pixels[3 * i + 1] + 1868u * rgb.pixels[3 * i + 2] + 8192u) >> 14);
    return compress_jpeg(gray.data(), rgb.width, rgb.height, 1, JCS_GRAYSCALE, recipe);
  }
  if (recipe.written == JCS_CMYK || recipe.written == JCS_YCCK) {
    std::vector<unsigned char> inks(pixels * 4);
    for (std::size_t i = 0; i < pixels; ++i) {
      for (std::size_t c = 0; c < 3; ++c) inks[4 * i + c] = rgb.pixels[3 * i + c];
      inks[4 * i + 3] = 255;
    }
    return compress_jpeg(inks.data(), rgb.width, rgb.height, 4, JCS_CMYK, recipe);
  }
  return compress_jpeg(rgb.pixels.data(), rgb.width, rgb.height, 3, JCS_RGB, recipe);
}

}  // namespace streampipe::io::testing
