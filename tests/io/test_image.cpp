// SPDX-License-Identifier: Apache-2.0
// Image I/O: files written here directly with libpng/libjpeg in every variant are read back
// through streampipe::io, our encoders round-trip, and bad input throws ImageError naming
// the source.

#include "streampipe/io/image.hpp"

#include "image_samples.hpp"
#include "jpeg_recipes.hpp"

#include <gtest/gtest.h>

#include <csetjmp>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <vector>

#include <png.h>
#include <jpeglib.h>

namespace streampipe::io {
namespace {

namespace fs = std::filesystem;

// ---- writing test files with libpng directly -------------------------------------------

struct PngSpec {
  png_uint_32 width = 0, height = 0;
  int color_type = PNG_COLOR_TYPE_GRAY;
  int bit_depth = 8;
  bool interlaced = false;
  std::vector<png_color> palette;
  std::vector<png_byte> trns_alpha;  // palette alpha
  bool gray_trns = false;
  png_uint_16 gray_trns_value = 0;
};

struct PngSink {
  std::vector<std::byte> bytes;
};

void sink_write(png_structp png, png_bytep data, png_size_t n) {
  auto* sink = static_cast<PngSink*>(png_get_io_ptr(png));
  sink->bytes.insert(sink->bytes.end(), reinterpret_cast<std::byte*>(data), reinterpret_cast<std::byte*>(data) + n);
}
void sink_flush(png_structp) {}

// Rows are in PNG's own layout (packed sub-byte samples, big-endian 16-bit).
bool write_png_raw(PngSink& sink, const PngSpec& spec, png_bytep* rows) {
  png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, nullptr, nullptr, nullptr);
  png_infop info = png_create_info_struct(png);
  if (setjmp(png_jmpbuf(png))) {
    png_destroy_write_struct(&png, &info);
    return false;
  }
  png_set_write_fn(png, &sink, sink_write, sink_flush);
  png_set_IHDR(png, info, spec.width, spec.height, spec.bit_depth, spec.color_type,
               spec.interlaced ? PNG_INTERLACE_ADAM7 : PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT,
               PNG_FILTER_TYPE_DEFAULT);
  if (!spec.palette.empty())
    png_set_PLTE(png, info, spec.palette.data(), static_cast<int>(spec.palette.size()));
  if (!spec.trns_alpha.empty())
    png_set_tRNS(png, info, spec.trns_alpha.data(), static_cast<int>(spec.trns_alpha.size()), nullptr);
  if (spec.gray_trns) {
    png_color_16 c{};
    c.gray = spec.gray_trns_value;
    png_set_tRNS(png, info, nullptr, 0, &c);
  }
  png_write_info(png, info);
  if (spec.interlaced) png_set_interlace_handling(png);
  png_write_image(png, rows);
  png_write_end(png, nullptr);
  png_destroy_write_struct(&png, &info);
  return true;
}

std::vector<std::byte> make_png(const PngSpec& spec, std::vector<std::vector<png_byte>>& rows) {
  std::vector<png_bytep> pointers;
  for (auto& r : rows) pointers.push_back(r.data());
  PngSink sink;
  EXPECT_TRUE(write_png_raw(sink, spec, pointers.data()));
  return sink.bytes;
}

int channels_of(int color_type) {
  switch (color_type) {
    case PNG_COLOR_TYPE_GRAY: return 1;
    case PNG_COLOR_TYPE_GRAY_ALPHA: return 2;
    case PNG_COLOR_TYPE_RGB: return 3;
    case PNG_COLOR_TYPE_RGB_ALPHA: return 4;
    default: return 1;  // palette: one index
  }
}

std::uint16_t sample_at(const Image& img, std::size_t i) {
  if (img.bit_depth == 8) return img.pixels[i];
  std::uint16_t v;
  std::memcpy(&v, img.pixels.data() + 2 * i, 2);
  return v;
}

// ---- PNG read, direct color types ------------------------------------------------------

struct DirectCase {
  int color_type;
  int bit_depth;
  bool interlaced;
};

class PngDirect : public ::testing::TestWithParam<DirectCase> {};

TEST_P(PngDirect, ReadsWhatLibpngWrote) {
  const auto c = GetParam();
  PngSpec spec;
  spec.width = 37;
  spec.height = 23;
  spec.color_type = c.color_type;
  spec.bit_depth = c.bit_depth;
  spec.interlaced = c.interlaced;
  const int channels = channels_of(c.color_type);
  const std::size_t bytes_per_sample = c.bit_depth == 16 ? 2 : 1;
  std::mt19937 rng(static_cast<unsigned>(c.color_type * 100 + c.bit_depth + (c.interlaced ? 7 : 0)));
  std::vector<std::uint16_t> values(std::size_t{spec.width} * spec.height * channels);
  for (auto& v : values) v = static_cast<std::uint16_t>(c.bit_depth == 16 ? rng() & 0xffff : rng() & 0xff);
  std::vector<std::vector<png_byte>> rows(spec.height);
  for (std::size_t y = 0; y < spec.height; ++y) {
    for (std::size_t i = 0; i < std::size_t{spec.width} * channels; ++i) {
      const std::uint16_t v = values[y * spec.width * channels + i];
      if (bytes_per_sample == 2) {
        rows[y].push_back(static_cast<png_byte>(v >> 8));  // PNG is big-endian
        rows[y].push_back(static_cast<png_byte>(v & 0xff));
      } else {
        rows[y].push_back(static_cast<png_byte>(v));
      }
    }
  }
  const auto file = make_png(spec, rows);
  ASSERT_EQ(detect_image_format(file), ImageFormat::png);
  const Image img = decode_image(file);
  ASSERT_EQ(img.width, spec.width);
  ASSERT_EQ(img.height, spec.height);
  ASSERT_EQ(img.channels, channels);
  ASSERT_EQ(img.bit_depth, c.bit_depth);
  ASSERT_NO_THROW(img.validate());
  for (std::size_t i = 0; i < values.size(); ++i) ASSERT_EQ(sample_at(img, i), values[i]) << "sample " << i;

  if (c.bit_depth == 16) {
    ImageReadOptions strip;
    strip.strip_16 = true;
    const Image s = decode_image(file, strip);
    ASSERT_EQ(s.bit_depth, 8);
    for (std::size_t i = 0; i < values.size(); ++i) {
      const int want = static_cast<int>((values[i] * 255u + 32767u) / 65535u);
      ASSERT_NEAR(static_cast<int>(s.pixels[i]), want, 1) << "sample " << i;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    AllDirect, PngDirect,
    ::testing::Values(DirectCase{PNG_COLOR_TYPE_GRAY, 8, false}, DirectCase{PNG_COLOR_TYPE_GRAY, 8, true},
                      DirectCase{PNG_COLOR_TYPE_GRAY, 16, false}, DirectCase{PNG_COLOR_TYPE_GRAY, 16, true},
                      DirectCase{PNG_COLOR_TYPE_GRAY_ALPHA, 8, false}, DirectCase{PNG_COLOR_TYPE_GRAY_ALPHA, 16, true},
                      DirectCase{PNG_COLOR_TYPE_RGB, 8, false}, DirectCase{PNG_COLOR_TYPE_RGB, 8, true},
                      DirectCase{PNG_COLOR_TYPE_RGB, 16, false}, DirectCase{PNG_COLOR_TYPE_RGB, 16, true},
                      DirectCase{PNG_COLOR_TYPE_RGB_ALPHA, 8, false}, DirectCase{PNG_COLOR_TYPE_RGB_ALPHA, 8, true},
                      DirectCase{PNG_COLOR_TYPE_RGB_ALPHA, 16, false}));

// ---- PNG read, palette and sub-byte gray -----------------------------------------------

// Packs `bits`-wide values MSB first, as PNG stores them.
std::vector<png_byte> pack_row(const std::vector<unsigned>& v, int bits) {
  std::vector<png_byte> row((v.size() * static_cast<std::size_t>(bits) + 7) / 8, 0);
  for (std::size_t i = 0; i < v.size(); ++i) {
    const std::size_t bit = i * static_cast<std::size_t>(bits);
    row[bit / 8] = static_cast<png_byte>(row[bit / 8] | (v[i] << (8 - bits - static_cast<int>(bit % 8))));
  }
  return row;
}

TEST(PngPalette, ExpandsToRgbAndRgbaAtEveryDepth) {
  for (int bits : {1, 2, 4, 8}) {
    for (bool with_alpha : {false, true}) {
      for (bool interlaced : {false, true}) {
        PngSpec spec;
        spec.width = 29;
        spec.height = 11;
        spec.color_type = PNG_COLOR_TYPE_PALETTE;
        spec.bit_depth = bits;
        spec.interlaced = interlaced;
        const unsigned entries = 1u << bits;
        std::mt19937 rng(static_cast<unsigned>(bits * 10 + with_alpha));
        for (unsigned e = 0; e < entries; ++e)
          spec.palette.push_back(png_color{static_cast<png_byte>(rng()), static_cast<png_byte>(rng()),
                                           static_cast<png_byte>(rng())});
        if (with_alpha)
          for (unsigned e = 0; e < entries / 2 + 1; ++e) spec.trns_alpha.push_back(static_cast<png_byte>(rng()));
        std::vector<unsigned> index(std::size_t{spec.width} * spec.height);
        for (auto& i : index) i = static_cast<unsigned>(rng() % entries);
        std::vector<std::vector<png_byte>> rows;
        for (std::size_t y = 0; y < spec.height; ++y)
          rows.push_back(pack_row({index.begin() + static_cast<long>(y * spec.width),
                                   index.begin() + static_cast<long>((y + 1) * spec.width)}, bits));
        const Image img = decode_image(make_png(spec, rows));
        ASSERT_EQ(img.channels, with_alpha ? 4 : 3) << bits << " bits";
        ASSERT_EQ(img.bit_depth, 8);
        for (std::size_t p = 0; p < index.size(); ++p) {
          const auto& color = spec.palette[index[p]];
          const std::size_t base = p * static_cast<std::size_t>(img.channels);
          ASSERT_EQ(img.pixels[base], color.red) << bits << " bits, pixel " << p;
          ASSERT_EQ(img.pixels[base + 1], color.green);
          ASSERT_EQ(img.pixels[base + 2], color.blue);
          if (with_alpha) {
            const unsigned alpha = index[p] < spec.trns_alpha.size() ? spec.trns_alpha[index[p]] : 255u;
            ASSERT_EQ(img.pixels[base + 3], alpha) << bits << " bits, pixel " << p;
          }
        }
      }
    }
  }
}

TEST(PngGray, SubByteDepthsScaleToFullRange) {
  for (int bits : {1, 2, 4}) {
    PngSpec spec;
    spec.width = 31;
    spec.height = 9;
    spec.bit_depth = bits;
    spec.interlaced = bits == 2;
    std::mt19937 rng(static_cast<unsigned>(bits));
    std::vector<unsigned> v(std::size_t{spec.width} * spec.height);
    for (auto& x : v) x = static_cast<unsigned>(rng() % (1u << bits));
    std::vector<std::vector<png_byte>> rows;
    for (std::size_t y = 0; y < spec.height; ++y)
      rows.push_back(pack_row({v.begin() + static_cast<long>(y * spec.width),
                               v.begin() + static_cast<long>((y + 1) * spec.width)}, bits));
    const Image img = decode_image(make_png(spec, rows));
    ASSERT_EQ(img.channels, 1);
    ASSERT_EQ(img.bit_depth, 8);
    const unsigned scale = 255u / ((1u << bits) - 1);
    for (std::size_t i = 0; i < v.size(); ++i) ASSERT_EQ(img.pixels[i], v[i] * scale) << bits << " bits, " << i;
  }
}

TEST(PngGray, TransparentGrayValueBecomesAlpha) {
  PngSpec spec;
  spec.width = 5;
  spec.height = 1;
  spec.gray_trns = true;
  spec.gray_trns_value = 7;
  std::vector<std::vector<png_byte>> rows = {{7, 8, 7, 0, 255}};
  const Image img = decode_image(make_png(spec, rows));
  ASSERT_EQ(img.channels, 2);
  const std::vector<std::uint8_t> want = {7, 0, 8, 255, 7, 0, 0, 255, 255, 255};
  EXPECT_EQ(img.pixels, want);
}

// ---- our encoders ----------------------------------------------------------------------

TEST(PngEncode, RoundTripsEveryLayout) {
  for (int channels = 1; channels <= 4; ++channels)
    for (int depth : {8, 16})
      for (bool interlaced : {false, true}) {
        const Image img = random_image(41, 17, channels, depth, static_cast<unsigned>(channels * depth));
        PngWriteOptions o;
        o.interlaced = interlaced;
        o.compression = interlaced ? 9 : 1;
        const auto bytes = encode_png(img, o);
        const Image back = decode_image(bytes);
        EXPECT_EQ(back.channels, channels);
        EXPECT_EQ(back.bit_depth, depth);
        EXPECT_EQ(back.width, img.width);
        EXPECT_EQ(back.pixels, img.pixels) << channels << " channels, " << depth << " bits";
      }
}

TEST(PngEncode, RejectsInvalidImages) {
  Image bad = Image::make(4, 4, 3);
  bad.pixels.pop_back();
  EXPECT_THROW((void)encode_png(bad), std::invalid_argument);
  EXPECT_THROW((void)encode_png(Image{}), std::invalid_argument);
  EXPECT_THROW((void)Image::make(2, 2, 5), std::invalid_argument);
  EXPECT_THROW((void)Image::make(2, 2, 3, 12), std::invalid_argument);
}

int max_difference(const Image& a, const Image& b) {
  int worst = 0;
  for (std::size_t i = 0; i < a.pixels.size(); ++i)
    worst = std::max(worst, std::abs(int{a.pixels[i]} - int{b.pixels[i]}));
  return worst;
}

TEST(JpegEncode, GrayAndRgbRoundTripClosely) {
  for (int channels : {1, 3}) {
    const Image img = smooth_image(67, 45, channels);
    const auto bytes = encode_jpeg(img, 98);
    ASSERT_EQ(detect_image_format(bytes), ImageFormat::jpeg);
    const Image back = decode_image(bytes);
    ASSERT_EQ(back.channels, channels);
    ASSERT_EQ(back.width, 67u);
    ASSERT_EQ(back.height, 45u);
    EXPECT_LE(max_difference(img, back), 12) << channels << " channels";
  }
}

TEST(JpegEncode, RejectsAlphaSixteenBitAndBadQuality) {
  EXPECT_THROW((void)encode_jpeg(Image::make(3, 3, 4)), std::invalid_argument);
  EXPECT_THROW((void)encode_jpeg(Image::make(3, 3, 2)), std::invalid_argument);
  EXPECT_THROW((void)encode_jpeg(Image::make(3, 3, 3, 16)), std::invalid_argument);
  EXPECT_THROW((void)encode_jpeg(Image::make(3, 3, 3), 0), std::invalid_argument);
  EXPECT_THROW((void)encode_jpeg(Image::make(3, 3, 3), 101), std::invalid_argument);
}

// ---- JPEG written with libjpeg directly (including CMYK) -------------------------------

// Quality 100: RGB written as 4:2:0 YCbCr, gray as gray, CMYK as CMYK with libjpeg's Adobe marker.
std::vector<std::byte> libjpeg_write(std::uint32_t w, std::uint32_t h, int components, J_COLOR_SPACE space,
                                     const std::vector<std::uint8_t>& data) {
  const J_COLOR_SPACE written = space == JCS_RGB ? JCS_YCbCr : space;
  const int sampling = space == JCS_RGB ? 2 : 1;
  return testing::compress_jpeg(data.data(), w, h, components, space,
                                {"libjpeg_write", written, sampling, sampling, false, 0, false, 100});
}

TEST(JpegRead, CmykBecomesRgb) {
  // Flat colour: JPEG reproduces it almost exactly. libjpeg writes an Adobe marker with
  // CMYK, so the values are read as Adobe-inverted inks: R = C * K / 255.
  const std::uint32_t w = 24, h = 16;
  const std::uint8_t c = 200, m = 100, y = 50, k = 220;
  std::vector<std::uint8_t> cmyk;
  for (std::uint32_t i = 0; i < w * h; ++i) cmyk.insert(cmyk.end(), {c, m, y, k});
  const Image img = decode_image(libjpeg_write(w, h, 4, JCS_CMYK, cmyk));
  ASSERT_EQ(img.channels, 3);
  const int want[3] = {c * k / 255, m * k / 255, y * k / 255};
  for (std::size_t p = 0; p < std::size_t{w} * h; ++p)
    for (int ch = 0; ch < 3; ++ch) ASSERT_NEAR(img.pixels[p * 3 + static_cast<std::size_t>(ch)], want[ch], 3);
}

TEST(JpegRead, GrayAndRgbFromLibjpeg) {
  const Image gray = smooth_image(33, 21, 1), rgb = smooth_image(33, 21, 3);
  const Image g = decode_image(libjpeg_write(33, 21, 1, JCS_GRAYSCALE, gray.pixels));
  const Image r = decode_image(libjpeg_write(33, 21, 3, JCS_RGB, rgb.pixels));
  ASSERT_EQ(g.channels, 1);
  ASSERT_EQ(r.channels, 3);
  EXPECT_LE(max_difference(gray, g), 4);
  EXPECT_LE(max_difference(rgb, r), 8);
}

}  // namespace
}  // namespace streampipe::io
