// SPDX-License-Identifier: Apache-2.0
// Writes the fuzzers' seed corpora: streampipe_fuzz_seeds DIR writes DIR/<target>/seed-*,
// small valid inputs of every kind each reader knows (the fuzzer mutates from there), and
// the hostile files of issue 24 (decompression bombs, trusted lengths, cut files), which
// every run then re-reads under libFuzzer's malloc limit.
// Deterministic: the same files every run, so the committed corpus can be regenerated and
// compared. Images come from libpng and libjpeg-turbo directly where the library's own
// encoders do not make the variant (palettes, sub-byte depths, text chunks, progressive,
// arithmetic coding, restart markers, CMYK).

#include "cache_fixture.hpp"

#include "streampipe/io/image.hpp"

#include <jpeglib.h>
#include <png.h>
#include <zlib.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <string_view>
#include <vector>

namespace {

namespace fs = std::filesystem;
using namespace streampipe;
using Bytes = std::vector<std::byte>;

fs::path root;

void write(const std::string& target, const std::string& name, std::string_view bytes) {
  const fs::path dir = root / target;
  fs::create_directories(dir);
  std::ofstream out(dir / ("seed-" + name), std::ios::binary);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!out) {
    std::fprintf(stderr, "make_seeds: cannot write %s\n", (dir / name).c_str());
    std::exit(1);
  }
}

void write(const std::string& target, const std::string& name, const Bytes& bytes) {
  write(target, name, std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()));
}

io::Image random_image(std::uint32_t w, std::uint32_t h, int channels, int depth, unsigned seed) {
  io::Image img = io::Image::make(w, h, channels, depth);
  std::mt19937 rng(seed);
  for (auto& b : img.pixels) b = static_cast<std::uint8_t>(rng() & 0x3f);  // compressible
  return img;
}

// ---- PNG through libpng: the variants io::encode_png does not write ------------------------

struct PngSpec {
  std::uint32_t width, height;
  int depth, color_type;
  bool interlaced = false;
  int palette_entries = 0;  // for PNG_COLOR_TYPE_PALETTE
  int trns_entries = 0;     // palette alpha entries, or 1 for a gray/RGB tRNS colour
  bool text = false;        // a tEXt and a zTXt chunk before the image data
};

void on_png_error(png_structp, png_const_charp message) {
  std::fprintf(stderr, "make_seeds: libpng: %s\n", message);
  std::exit(1);  // the seeds are fixed: an error is a bug here
}

void to_bytes(png_structp png, png_bytep data, png_size_t n) {
  auto* out = static_cast<Bytes*>(png_get_io_ptr(png));
  out->insert(out->end(), reinterpret_cast<std::byte*>(data), reinterpret_cast<std::byte*>(data) + n);
}

Bytes libpng_write(const PngSpec& s) {
  Bytes out;
  png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, nullptr, on_png_error, nullptr);
  png_infop info = png_create_info_struct(png);
  png_set_write_fn(png, &out, to_bytes, nullptr);
  png_set_IHDR(png, info, s.width, s.height, s.depth, s.color_type,
               s.interlaced ? PNG_INTERLACE_ADAM7 : PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT,
               PNG_FILTER_TYPE_DEFAULT);
  std::vector<png_color> palette(static_cast<std::size_t>(s.palette_entries));
  for (std::size_t i = 0; i < palette.size(); ++i)
    palette[i] = {static_cast<png_byte>(i * 40), static_cast<png_byte>(255 - i * 20), static_cast<png_byte>(i * 7)};
  if (!palette.empty()) png_set_PLTE(png, info, palette.data(), s.palette_entries);
  std::vector<png_byte> alpha(static_cast<std::size_t>(s.trns_entries), 128);
  png_color_16 trans_color{};
  trans_color.gray = 1;
  trans_color.red = 1;
  if (s.trns_entries > 0)
    png_set_tRNS(png, info, s.color_type == PNG_COLOR_TYPE_PALETTE ? alpha.data() : nullptr, s.trns_entries,
                 s.color_type == PNG_COLOR_TYPE_PALETTE ? nullptr : &trans_color);
  png_text texts[2] = {};
  if (s.text) {
    texts[0].compression = PNG_TEXT_COMPRESSION_NONE;
    texts[0].key = const_cast<char*>("Comment");
    texts[0].text = const_cast<char*>("a seed for the PNG fuzzer");
    texts[1].compression = PNG_TEXT_COMPRESSION_zTXt;
    texts[1].key = const_cast<char*>("Description");
    texts[1].text = const_cast<char*>("compressed text compressed text compressed text");
    png_set_text(png, info, texts, 2);
  }
  png_write_info(png, info);
  if (s.interlaced) png_set_interlace_handling(png);
  const std::size_t row_bytes = png_get_rowbytes(png, info);
  std::vector<png_byte> row(row_bytes);
  std::vector<png_bytep> rows(s.height);
  std::vector<std::vector<png_byte>> storage(s.height, row);
  for (std::uint32_t y = 0; y < s.height; ++y) {
    for (std::size_t x = 0; x < row_bytes; ++x) storage[y][x] = static_cast<png_byte>((x * 37 + y * 11) & 0xff);
    if (s.color_type == PNG_COLOR_TYPE_PALETTE && s.depth == 8)
      for (auto& b : storage[y]) b = static_cast<png_byte>(b % s.palette_entries);
    rows[y] = storage[y].data();
  }
  png_write_image(png, rows.data());
  png_write_end(png, info);
  png_destroy_write_struct(&png, &info);
  return out;
}

void put_be32(Bytes& out, std::uint32_t v) {
  for (int shift = 24; shift >= 0; shift -= 8) out.push_back(static_cast<std::byte>((v >> shift) & 0xff));
}

// A chunk whose length field says `declared`, with `data` after it and a right CRC.
void add_chunk(Bytes& out, const char (&type)[5], const Bytes& data, std::uint32_t declared) {
  put_be32(out, declared);
  Bytes body(reinterpret_cast<const std::byte*>(type), reinterpret_cast<const std::byte*>(type) + 4);
  body.insert(body.end(), data.begin(), data.end());
  out.insert(out.end(), body.begin(), body.end());
  put_be32(out, static_cast<std::uint32_t>(crc32(0, reinterpret_cast<const Bytef*>(body.data()),
                                                 static_cast<uInt>(body.size()))));
}

Bytes png_header(std::uint32_t width, std::uint32_t height, int depth, int color_type) {
  const unsigned char signature[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
  Bytes out(reinterpret_cast<const std::byte*>(signature), reinterpret_cast<const std::byte*>(signature) + 8);
  Bytes ihdr;
  put_be32(ihdr, width);
  put_be32(ihdr, height);
  for (const int b : {depth, color_type, 0, 0, 0}) ihdr.push_back(static_cast<std::byte>(b));
  add_chunk(out, "IHDR", ihdr, 13);
  return out;
}

void hostile_png_seeds() {
  const std::string t = "png_reader";
  // libpng's crasher shape: a 1x1 image, then a text chunk that claims 2 GiB.
  Bytes huge_chunk = png_header(1, 1, 8, 0);
  put_be32(huge_chunk, 0x7fffffff);
  for (const char c : {'t', 'E', 'X', 't'}) huge_chunk.push_back(static_cast<std::byte>(c));
  huge_chunk.resize(huge_chunk.size() + 16);
  write(t, "hostile-huge-text-chunk.png", huge_chunk);
  // A 68-byte file that declares 16384 x 16384 RGB with 11 bytes of image data.
  Bytes header = png_header(16384, 16384, 8, 2);
  Bytes raw(16);
  uLongf size = compressBound(static_cast<uLong>(raw.size()));
  Bytes zdata(size);
  compress2(reinterpret_cast<Bytef*>(zdata.data()), &size, reinterpret_cast<const Bytef*>(raw.data()),
            static_cast<uLong>(raw.size()), 9);
  zdata.resize(size);
  add_chunk(header, "IDAT", zdata, static_cast<std::uint32_t>(zdata.size()));
  add_chunk(header, "IEND", {}, 0);
  write(t, "hostile-68-byte-header.png", header);
}

void png_seeds() {
  const std::string t = "png_reader";
  write(t, "gray8.png", io::encode_png(random_image(4, 3, 1, 8, 1)));
  write(t, "gray-alpha8.png", io::encode_png(random_image(3, 3, 2, 8, 2)));
  write(t, "rgb8.png", io::encode_png(random_image(5, 4, 3, 8, 3)));
  write(t, "rgba8.png", io::encode_png(random_image(4, 4, 4, 8, 4)));
  write(t, "gray16.png", io::encode_png(random_image(3, 2, 1, 16, 5)));
  write(t, "rgba16.png", io::encode_png(random_image(2, 3, 4, 16, 6)));
  write(t, "rgb8-adam7.png", io::encode_png(random_image(9, 7, 3, 8, 7), {.interlaced = true}));
  write(t, "rgb8-paeth-stored.png",
        io::encode_png(random_image(6, 5, 3, 8, 8), {.compression = 0, .filter = io::PngFilter::paeth}));
  write(t, "gray8-sub-huffman.png",
        io::encode_png(random_image(8, 4, 1, 8, 9),
                       {.compression = 9, .filter = io::PngFilter::sub, .strategy = io::PngStrategy::huffman}));
  for (const int depth : {1, 2, 4})
    write(t, "gray" + std::to_string(depth) + ".png", libpng_write({11, 5, depth, PNG_COLOR_TYPE_GRAY}));
  for (const int depth : {1, 2, 4, 8})
    write(t, "palette" + std::to_string(depth) + "-trns.png",
          libpng_write({.width = 7, .height = 5, .depth = depth, .color_type = PNG_COLOR_TYPE_PALETTE,
                        .palette_entries = 1 << std::min(depth, 4), .trns_entries = 2}));
  write(t, "gray8-trns.png",
        libpng_write({.width = 4, .height = 4, .depth = 8, .color_type = PNG_COLOR_TYPE_GRAY, .trns_entries = 1}));
  write(t, "rgb16-trns-adam7.png",
        libpng_write({.width = 5, .height = 6, .depth = 16, .color_type = PNG_COLOR_TYPE_RGB, .interlaced = true,
                      .trns_entries = 1}));
  write(t, "rgb8-text.png",
        libpng_write({.width = 3, .height = 3, .depth = 8, .color_type = PNG_COLOR_TYPE_RGB, .text = true}));
}

// ---- JPEG through libjpeg-turbo ---------------------------------------------------------

struct JpegSpec {
  std::uint32_t width, height;
  int components;  // 1 gray, 3 RGB (stored YCbCr unless rgb), 4 CMYK
  int quality = 75;
  bool progressive = false;
  bool arithmetic = false;
  int restart_rows = 0;
  bool full_chroma = false;  // 4:4:4 instead of 4:2:0
  bool rgb = false;          // stored as RGB (no colour transform)
};

Bytes libjpeg_write(const JpegSpec& s) {
  jpeg_compress_struct cinfo;
  jpeg_error_mgr err;
  cinfo.err = jpeg_std_error(&err);  // exits on error: the seeds are fixed
  jpeg_create_compress(&cinfo);
  unsigned char* buffer = nullptr;
  unsigned long size = 0;
  jpeg_mem_dest(&cinfo, &buffer, &size);
  cinfo.image_width = s.width;
  cinfo.image_height = s.height;
  cinfo.input_components = s.components;
  cinfo.in_color_space = s.components == 1 ? JCS_GRAYSCALE : s.components == 3 ? JCS_RGB : JCS_CMYK;
  jpeg_set_defaults(&cinfo);
  if (s.components == 4) jpeg_set_colorspace(&cinfo, JCS_CMYK);
  if (s.rgb) jpeg_set_colorspace(&cinfo, JCS_RGB);
  jpeg_set_quality(&cinfo, s.quality, TRUE);
  if (s.progressive) jpeg_simple_progression(&cinfo);
  cinfo.arith_code = s.arithmetic ? TRUE : FALSE;
  cinfo.restart_in_rows = s.restart_rows;
  if (s.full_chroma)
    for (int c = 0; c < cinfo.num_components; ++c) cinfo.comp_info[c].h_samp_factor = cinfo.comp_info[c].v_samp_factor = 1;
  jpeg_start_compress(&cinfo, TRUE);
  std::vector<unsigned char> row(std::size_t{s.width} * static_cast<std::size_t>(s.components));
  while (cinfo.next_scanline < s.height) {
    for (std::size_t x = 0; x < row.size(); ++x) row[x] = static_cast<unsigned char>((x * 5 + cinfo.next_scanline * 9) & 0xff);
    JSAMPROW p = row.data();
    jpeg_write_scanlines(&cinfo, &p, 1);
  }
  jpeg_finish_compress(&cinfo);
  jpeg_destroy_compress(&cinfo);
  Bytes out(reinterpret_cast<std::byte*>(buffer), reinterpret_cast<std::byte*>(buffer) + size);
  std::free(buffer);
  return out;
}

void jpeg_seeds() {
  const std::string t = "jpeg_reader";
  write(t, "gray.jpg", io::encode_jpeg(random_image(8, 8, 1, 8, 11), 80));
  write(t, "rgb-420-partial-mcu.jpg", io::encode_jpeg(random_image(17, 13, 3, 8, 12), 60));
  write(t, "rgb-444.jpg", libjpeg_write({.width = 16, .height = 8, .components = 3, .full_chroma = true}));
  write(t, "rgb-progressive.jpg", libjpeg_write({.width = 16, .height = 16, .components = 3, .progressive = true}));
  write(t, "gray-progressive.jpg", libjpeg_write({.width = 9, .height = 9, .components = 1, .progressive = true}));
  write(t, "rgb-arithmetic.jpg", libjpeg_write({.width = 16, .height = 16, .components = 3, .arithmetic = true}));
  write(t, "rgb-progressive-arithmetic.jpg",
        libjpeg_write({.width = 12, .height = 10, .components = 3, .progressive = true, .arithmetic = true}));
  write(t, "rgb-restarts.jpg", libjpeg_write({.width = 16, .height = 32, .components = 3, .restart_rows = 1}));
  write(t, "cmyk-adobe.jpg", libjpeg_write({.width = 8, .height = 8, .components = 4}));
  write(t, "rgb-stored-rgb.jpg", libjpeg_write({.width = 8, .height = 8, .components = 3, .rgb = true}));
}

void hostile_jpeg_seeds() {
  const std::string t = "jpeg_reader";
  // Frame header patched to 60000 x 60000 and to 8000 x 8000.
  const Bytes jpeg = io::encode_jpeg(random_image(16, 16, 3, 8, 21), 90);
  for (const std::uint16_t side : {std::uint16_t{60000}, std::uint16_t{8000}}) {
    Bytes patched = jpeg;
    for (std::size_t i = 2; i + 8 < patched.size(); ++i)
      if (patched[i] == std::byte{0xFF} && patched[i + 1] == std::byte{0xC0}) {
        for (const std::size_t at : {i + 5, i + 7}) {
          patched[at] = static_cast<std::byte>(side >> 8);
          patched[at + 1] = static_cast<std::byte>(side & 0xff);
        }
        break;
      }
    write(t, "hostile-patched-" + std::to_string(side) + ".jpg", patched);
  }
  // Cut in the middle of its scan, still ending with EOI.
  Bytes cut(jpeg.begin(), jpeg.begin() + static_cast<std::ptrdiff_t>(jpeg.size() / 2));
  cut.push_back(std::byte{0xFF});
  cut.push_back(std::byte{0xD9});
  write(t, "hostile-cut-with-eoi.jpg", cut);
}

// ---- Life patterns, kernel-cache entries, argument vectors -------------------------------

void pattern_seeds() {
  const std::string t = "life_pattern";
  write(t, "glider.rle", "#N Glider\n#C The smallest spaceship.\nx = 3, y = 3, rule = B3/S23\nbob$2bo$3o!\n");
  write(t, "gosper-gun.rle",
        "#N Gosper glider gun\nx = 36, y = 9, rule = B3/S23\n24bo$22bobo$12b2o6b2o12b2o$11bo3bo4b2o12b2o$2o8bo5bo3b2o$"
        "2o8bo3bob2o4bobo$10bo5bo7bo$11bo3bo$12b2o!\n");
  write(t, "bom-crlf.rle", "\xEF\xBB\xBF#C saved on Windows\r\nx = 2, y = 2, rule = 23/3\r\n2o$2o!\r\n");
  write(t, "rule-comment.rle", "#r B3/S23\nx=5,y=4\n2o3b$5o2$b\n3o!\n");
  write(t, "glider.cells", "!Name: Glider\n!\n.O\n..O\nOOO\n");
  write(t, "blank-rows.cells", "O*\n\n.O\n");
  write(t, "bom.cells", "\xEF\xBB\xBF!Name: block\nOO\nOO\n");
  write(t, "hostile-huge-header.rle", "x = 1048576, y = 65536\n!\n");
  write(t, "hostile-tall.cells", std::string(3000, 'O') + std::string(3000, '\n') + "O\n");
}

void cache_seeds() {
  const std::string t = "kernel_cache_entry";
  const auto& key = fuzz::cache_fixture_key();
  write(t, "cubin.spk", jit::encode_entry(key, fuzz::cache_fixture_result(jit::BinaryKind::cubin, 24)));
  write(t, "ptx.spk", jit::encode_entry(key, fuzz::cache_fixture_result(jit::BinaryKind::ptx, 9)));
  auto plain = fuzz::cache_fixture_result(jit::BinaryKind::cubin, 1);
  plain.lowered.clear();
  plain.log.clear();
  write(t, "no-names.spk", jit::encode_entry(key, plain));
}

void argument_seeds() {
  const std::string t = "cli_arguments";
  using namespace std::string_literals;
  write(t, "info", "info\0--json\0-"s);
  write(t, "gray", "gray\0in.png\0more/\0-o\0out\0-r\0--format\0jpeg\0--decode\0cpu\0--json\0g.json"s);
  write(t, "gray-report", "gray\0a.jpg\0-o\0d\0--report\0--report-json\0-\0--force"s);
  write(t, "life", "life\0--size\0256x128\0-k\0bitpacked\0-u\02\0--population\0-\0--snapshot-every\010\0-o\0f"s);
  write(t, "life-pattern", "life\0-p\0glider.rle\0--live\0--json\0life.json"s);
  write(t, "mandelbrot", "mandelbrot\0--size\0320x200\0-i\0500\0--precision\0double\0-o\0m\0--image\0m.png"s);
  write(t, "serve-bench", "serve-bench\0--layers\04096,4096\0--concurrency\01,2,4\0--client\0async\0--svg\0s.svg"s);
  write(t, "bench", "bench\0streams\0--runs\03\0--json\0-"s);
  write(t, "demo", "demo\0-o\0demo-out\0--force"s);
  write(t, "version", "--version"s);
  write(t, "help", "gray\0--help"s);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s DIR   (writes DIR/<fuzz target>/seed-*)\n", argv[0]);
    return 2;
  }
  root = argv[1];
  png_seeds();
  hostile_png_seeds();
  jpeg_seeds();
  hostile_jpeg_seeds();
  pattern_seeds();
  cache_seeds();
  argument_seeds();
  return 0;
}
