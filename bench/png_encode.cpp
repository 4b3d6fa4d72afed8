// SPDX-License-Identifier: Apache-2.0
// PNG encoding of the gray tool's outputs, setting by setting: which part of libpng/zlib
// makes a 2-Mpixel 8-bit gray image slow to write, and what each choice costs in size.
//
// Inputs are what `streampipe bench gray` writes: photo-like 1920x1080 images
// (tools/gray/synthetic.hpp) through JPEG quality 90 and back (the tool decodes JPEGs), to
// 8-bit gray with the tool's BT.601 luma. Every setting encodes every image with libpng
// directly (filter, zlib strategy, level, memory level, window, whole-image vs row writes,
// compression buffer), one thread, host clock around the encode only; the median of the runs
// after a warm-up, with min and max. Every output is decoded with streampipe::io and compared
// with its input byte for byte (lossless) before any timing; the last row is
// streampipe::io::encode_png with its defaults for the level, the path the tool takes.
//
//   bench/png_encode [--content photo|graphic] [--images N] [--runs N] [--size WxH]
//                    [--levels L]... [--group TEXT]... [--json FILE]

#include "harness/measure.hpp"
#include "harness/result.hpp"

#include "streampipe/host/atomic_file.hpp"
#include "streampipe/io/image.hpp"
#include "streampipe/ops/rgb_to_gray.hpp"
#include "streampipe/tools/gray/synthetic.hpp"

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <png.h>
#include <zlib.h>

#include <algorithm>
#include <csetjmp>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

namespace io = streampipe::io;
namespace host = streampipe::host;
namespace report = streampipe::report;

struct Setting {
  std::string group;      // what the row varies
  std::string filter;     // name of the PNG filter choice
  int filters = PNG_ALL_FILTERS;
  std::string strategy;   // name of the zlib strategy
  int zstrategy = Z_FILTERED;  // libpng's own default whenever filtering is on
  int level = 1;
  int mem_level = 8;
  int window_bits = 15;
  bool by_rows = false;            // png_write_row per row instead of png_write_image
  std::size_t buffer = 8192;       // png_set_compression_buffer_size (libpng's default)
  bool library = false;            // io::encode_png with its defaults for the level
};

struct Sink {
  std::vector<std::byte> bytes;
  bool failed = false;
};

void sink_write(png_structp png, png_bytep data, png_size_t n) {
  auto* sink = static_cast<Sink*>(png_get_io_ptr(png));
  try {
    sink->bytes.insert(sink->bytes.end(), reinterpret_cast<std::byte*>(data), reinterpret_cast<std::byte*>(data) + n);
  } catch (...) {
    sink->failed = true;  // reported after libpng returns; no exception may cross it
  }
}
void sink_flush(png_structp) {}

// Only trivially destructible locals between setjmp and the return (see image_png.cpp).
bool encode_raw(const io::Image& img, png_bytep* rows, const Setting& s, Sink& sink) {
  png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, nullptr, nullptr, nullptr);
  if (png == nullptr) return false;
  png_infop info = png_create_info_struct(png);
  if (info == nullptr || setjmp(png_jmpbuf(png))) {
    png_destroy_write_struct(&png, info != nullptr ? &info : nullptr);
    return false;
  }
  png_set_write_fn(png, &sink, sink_write, sink_flush);
  png_set_IHDR(png, info, img.width, img.height, 8, PNG_COLOR_TYPE_GRAY, PNG_INTERLACE_NONE,
               PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
  png_set_filter(png, PNG_FILTER_TYPE_BASE, s.filters);
  png_set_compression_level(png, s.level);
  png_set_compression_strategy(png, s.zstrategy);
  png_set_compression_mem_level(png, s.mem_level);
  png_set_compression_window_bits(png, s.window_bits);
  png_set_compression_buffer_size(png, s.buffer);
  png_write_info(png, info);
  if (s.by_rows) {
    for (png_uint_32 y = 0; y < img.height; ++y) png_write_row(png, rows[y]);
  } else {
    png_write_image(png, rows);
  }
  png_write_end(png, nullptr);
  png_destroy_write_struct(&png, &info);
  return !sink.failed;
}

std::vector<std::byte> encode(const io::Image& img, const Setting& s) {
  if (s.library) return io::encode_png(img, {.compression = s.level});
  std::vector<png_bytep> rows(img.height);
  auto* base = const_cast<png_bytep>(img.pixels.data());  // libpng does not write to them
  for (std::size_t y = 0; y < img.height; ++y) rows[y] = base + y * img.row_bytes();
  Sink sink;
  sink.bytes.reserve(img.size_bytes() + 4096);
  if (!encode_raw(img, rows.data(), s, sink)) throw std::runtime_error("libpng failed to encode");
  return std::move(sink.bytes);
}

// Screenshot- or diagram-like content for contrast: flat areas, hard edges, a 16-step
// gradient and repeated stripes, no noise (what deflate's string matching is made for).
io::Image graphic_input(std::uint32_t width, std::uint32_t height, std::uint32_t seed) {
  io::Image gray = io::Image::make(width, height, 1, 8);
  for (std::uint32_t y = 0; y < height; ++y)
    for (std::uint32_t x = 0; x < width; ++x) {
      std::uint32_t v = (x * 16 / width) * 16;                                  // banded gradient
      if ((x / 40 + y / 40 + seed) % 7 == 0) v = 255 - v;                        // blocks
      if (y % 24 < 2 || (x + seed * 13) % 97 < 3) v = (seed * 37) & 255;         // rules and stripes
      gray.pixels[std::size_t{y} * width + x] = static_cast<std::uint8_t>(v);
    }
  return gray;
}

io::Image gray_input(std::uint32_t width, std::uint32_t height, std::uint32_t seed) {
  const io::Image rgb = streampipe::tools::gray::photo_like(width, height, seed);
  const io::Image decoded = io::decode_image(io::encode_jpeg(rgb, 90));
  if (decoded.channels != 3 || decoded.bit_depth != 8) throw std::runtime_error("JPEG did not decode to 8-bit RGB");
  io::Image gray = io::Image::make(width, height, 1, 8);
  for (std::size_t i = 0; i < gray.pixels.size(); ++i)
    gray.pixels[i] = streampipe::ops::luma_bt601(decoded.pixels[3 * i], decoded.pixels[3 * i + 1],
                                                 decoded.pixels[3 * i + 2]);
  return gray;
}

struct Filter {
  const char* name;
  int mask;
};
constexpr Filter kFilters[] = {{"all (libpng default)", PNG_ALL_FILTERS}, {"none", PNG_FILTER_NONE},
                               {"sub", PNG_FILTER_SUB},   {"up", PNG_FILTER_UP},
                               {"avg", PNG_FILTER_AVG},   {"paeth", PNG_FILTER_PAETH}};
struct Strategy {
  const char* name;
  int value;
};
constexpr Strategy kStrategies[] = {
    {"filtered (libpng default)", Z_FILTERED}, {"default", Z_DEFAULT_STRATEGY}, {"rle", Z_RLE}, {"huffman", Z_HUFFMAN_ONLY}};

std::vector<Setting> settings(const std::vector<int>& levels) {
  std::vector<Setting> out;
  for (const auto& f : kFilters) {  // what filtering alone costs: stored data, no compression
    Setting s;
    s.group = "stored (level 0)";
    s.filter = f.name;
    s.filters = f.mask;
    s.strategy = "-";
    s.level = 0;
    out.push_back(s);
  }
  for (int level : levels)
    for (const auto& f : kFilters)
      for (const auto& z : kStrategies) {
        Setting s;
        s.group = "filter x strategy x level";
        s.filter = f.name;
        s.filters = f.mask;
        s.strategy = z.name;
        s.zstrategy = z.value;
        s.level = level;
        out.push_back(s);
      }
  // The tool's old default (libpng's) with the other knobs: write path, buffer, memory, window.
  const auto variant = [&](const char* group, auto&& change) {
    for (const auto& [fname, fmask, zname, zvalue] :
         {std::tuple{"all (libpng default)", PNG_ALL_FILTERS, "filtered (libpng default)", Z_FILTERED},
          std::tuple{"up", PNG_FILTER_UP, "rle", Z_RLE}, std::tuple{"sub", PNG_FILTER_SUB, "rle", Z_RLE}}) {
      Setting s;
      s.group = group;
      s.filter = fname;
      s.filters = fmask;
      s.strategy = zname;
      s.zstrategy = zvalue;
      change(s);
      out.push_back(s);
    }
  };
  // libpng's adaptive choice restricted to a few filters: the per-row heuristic on fewer candidates.
  for (const auto& [fname, fmask] : {std::pair{"up|avg", PNG_FILTER_UP | PNG_FILTER_AVG},
                                     std::pair{"sub|up", PNG_FILTER_SUB | PNG_FILTER_UP},
                                     std::pair{"none|up|avg", PNG_FILTER_NONE | PNG_FILTER_UP | PNG_FILTER_AVG}})
    for (const auto& z : {kStrategies[2], kStrategies[0]}) {
      Setting s;
      s.group = "adaptive over a subset, level 1";
      s.filter = fname;
      s.filters = fmask;
      s.strategy = z.name;
      s.zstrategy = z.value;
      out.push_back(s);
    }
  variant("png_write_row per row", [](Setting& s) { s.by_rows = true; });
  variant("compression buffer 256 KiB", [](Setting& s) { s.buffer = 256 * 1024; });
  variant("mem level 9", [](Setting& s) { s.mem_level = 9; });
  variant("window 2^12", [](Setting& s) { s.window_bits = 12; });
  for (int level : {0, 1, 2, 3, 4, 6, 9}) {
    Setting s;
    s.group = "streampipe::io::encode_png";
    s.filter = "library";
    s.strategy = "library";
    s.level = level;
    s.library = true;
    out.push_back(s);
  }
  return out;
}

// One row: every image encoded with `s`, checked lossless before any timing; then the
// median of the runs (one warm-up first) of the encode time per image, host clock around
// each encode alone.
streampipe::bench::Row measure_setting(const Setting& s, const std::vector<io::Image>& inputs, int runs, double raw_mb) {
  namespace bench = streampipe::bench;
  double bytes = 0;
  for (const auto& img : inputs) {
    const auto png = encode(img, s);
    bytes += static_cast<double>(png.size());
    if (io::decode_image(png).pixels != img.pixels)
      throw std::runtime_error(fmt::format("{} / {} / level {}: decoded pixels differ", s.filter, s.strategy, s.level));
  }
  const double mb = bytes / static_cast<double>(inputs.size()) / 1e6;
  const bench::Samples ms = bench::measure(1, runs, {{}, [&] {
    double total = 0;
    for (const auto& img : inputs) {
      std::vector<std::byte> png;
      total += bench::wall_ms([&] { png = encode(img, s); });
      if (png.empty()) throw std::runtime_error("empty PNG");
    }
    return total / static_cast<double>(inputs.size());
  }, {}});
  bench::Row row;
  row.name = fmt::format("{} / {} / {} / level {}", s.group, s.filter, s.strategy, s.level);
  row.unit = "ms/image";
  row.values = ms.values;
  const auto st = row.summary();
  row.cells = {s.group, s.filter, s.strategy, std::to_string(s.level), fmt::format("{:.2f}", st.median),
               fmt::format("{:.2f}", st.min), fmt::format("{:.2f}", st.max), fmt::format("{:.3f}", mb),
               fmt::format("{:.3f}", mb / raw_mb), fmt::format("{:.0f}", raw_mb * 1e3 / st.median)};
  row.fields = {{"group", s.group}, {"filter", s.filter}, {"strategy", s.strategy}, {"level", s.level},
                {"mem_level", s.mem_level}, {"window_bits", s.window_bits}, {"by_rows", s.by_rows},
                {"buffer", s.buffer}, {"mb_per_image", mb}};
  fmt::print(stderr, "{:<28} {:<22} {:<26} {}  {:8.2f} ms  {:.3f} MB\n", s.group, s.filter, s.strategy, s.level,
             st.median, mb);
  return row;
}

}  // namespace

int main(int argc, char** argv) {
  namespace bench = streampipe::bench;
  CLI::App app("PNG encoding of 8-bit gray photo-like images, per libpng/zlib setting (see the source's head)");
  int images = 4;
  int runs = 5;
  std::string size = "1920x1080";
  std::string json_path;
  std::vector<std::string> only;
  std::string content = "photo";
  std::vector<int> levels{1, 3, 6};
  app.add_option("--images", images, "distinct images per run")->check(CLI::Range(1, 100))->capture_default_str();
  app.add_option("--runs", runs, "timed runs (median, min, max; one warm-up before)")
      ->check(CLI::Range(1, 100))->capture_default_str();
  app.add_option("--size", size, "WxH")->capture_default_str();
  app.add_option("--group", only, "only rows whose group contains this text (repeatable: any of them)");
  app.add_option("--content", content, "photo (the gray tool's outputs of photo-like JPEGs) or graphic (flat areas, "
                 "edges, stripes)")->check(CLI::IsMember({"photo", "graphic"}))->capture_default_str();
  app.add_option("--levels", levels, "zlib levels of the filter x strategy rows")->check(CLI::Range(1, 9));
  app.add_option("--json", json_path, "write the rows as JSON to FILE");
  CLI11_PARSE(app, argc, argv);
  unsigned width = 0, height = 0;
  if (std::sscanf(size.c_str(), "%ux%u", &width, &height) != 2 || width == 0 || height == 0 || width > 65535 ||
      height > 65535) {
    fmt::print(stderr, "png_encode: --size '{}' is not WxH\n", size);
    return 2;
  }
  try {
    fmt::print("libpng {}, zlib {} (header {}); {} {} images {}x{} 8-bit gray, {} runs\n",
               png_get_libpng_ver(nullptr), zlibVersion(), ZLIB_VERSION, images, content, width, height, runs);
    std::vector<io::Image> inputs;
    for (int i = 0; i < images; ++i) inputs.push_back(content == "photo" ? gray_input(width, height, static_cast<std::uint32_t>(i + 1))
                                         : graphic_input(width, height, static_cast<std::uint32_t>(i + 1)));
    const double raw_mb = static_cast<double>(inputs[0].size_bytes()) / 1e6;

    bench::Table table;
    table.name = "png_encode";
    table.title = fmt::format("PNG encode, one thread, {:.2f} MB raw per image", raw_mb);
    table.headers = {"group", "filter", "strategy", "level", "ms/image", "min", "max", "MB/image", "ratio", "MB/s in"};
    table.align.assign(table.headers.size(), report::Align::right);
    table.align[0] = table.align[1] = table.align[2] = report::Align::left;
    for (const Setting& s : settings(levels)) {
      if (!only.empty() && std::none_of(only.begin(), only.end(), [&](const std::string& text) {
            return s.group.find(text) != std::string::npos;
          }))
        continue;
      table.rows.push_back(measure_setting(s, inputs, runs, raw_mb));
    }
    fmt::print("{}", bench::format_table(table));
    if (!json_path.empty()) {
      bench::Result result;
      result.benchmark = "png_encode";
      result.device_name = "host (one thread)";
      result.runs = runs;
      result.warmup = 1;
      result.parameters = {{"images", images}, {"size", size}, {"content", content}, {"levels", levels}, {"group", only}};
      result.fields = {{"libpng", png_get_libpng_ver(nullptr)}, {"zlib", zlibVersion()}, {"width", width},
                       {"height", height}};
      result.tables.push_back(std::move(table));
      host::write_file_atomically(json_path, bench::envelope(result, bench::command_line()).dump(2) + "\n",
                                    host::Overwrite::allow);
    }
  } catch (const std::exception& e) {
    fmt::print(stderr, "png_encode: {}\n", e.what());
    return 1;
  }
  return 0;
}
