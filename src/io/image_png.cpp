// SPDX-License-Identifier: Apache-2.0
// PNG through libpng. libpng reports errors by calling our error function, which must not
// return; it longjmps back to the setjmp in the function that made the call. So every
// function that calls setjmp holds only trivially destructible locals, allocation happens
// outside them, and the C++ objects (vectors, strings) live in the callers.

#include "image_codecs.hpp"
#include "png_chunks.hpp"
#include "png_fast_encoder.hpp"

#include <fmt/format.h>
#include <png.h>
#include <zlib.h>

#include <bit>
#include <csetjmp>
#include <cstdio>
#include <cstring>

namespace streampipe::io {
namespace {

struct PngError {
  char message[256] = {};
};

[[noreturn]] void on_png_error(png_structp png, png_const_charp message) {
  auto* error = static_cast<PngError*>(png_get_error_ptr(png));
  if (error != nullptr) {
    std::strncpy(error->message, message != nullptr ? message : "unknown libpng error",
                 sizeof(error->message) - 1);
  }
  png_longjmp(png, 1);
}

void on_png_warning(png_structp, png_const_charp) {}  // benign (e.g. unknown chunks)

// Makes a codec state's libpng structures: `create` is png_create_read_struct (`codec`
// "decoder") or png_create_write_struct ("encoder"). False, with s.error set, when libpng
// cannot. The caller's setjmp comes after: it must stand in the function that calls libpng.
template <typename State, typename Create>
bool png_create(State& s, Create create, const char* codec) {
  s.png = create(PNG_LIBPNG_VER_STRING, &s.error, on_png_error, on_png_warning);
  if (s.png == nullptr) {
    std::snprintf(s.error.message, sizeof(s.error.message), "cannot create the libpng %s", codec);
    return false;
  }
  s.info = png_create_info_struct(s.png);
  if (s.info == nullptr) {
    std::strcpy(s.error.message, "cannot create the libpng info structure");
    return false;
  }
  return true;
}

struct MemoryReader {
  const png_byte* data;
  std::size_t size;
  std::size_t offset;
};

void read_from_memory(png_structp png, png_bytep out, png_size_t length) {
  auto* reader = static_cast<MemoryReader*>(png_get_io_ptr(png));
  if (length > reader->size - reader->offset) png_error(png, "truncated file (unexpected end of data)");
  std::memcpy(out, reader->data + reader->offset, length);
  reader->offset += length;
}

// The decoder's C state. Destroyed by the caller's guard whatever happens.
struct PngReadState {
  png_structp png = nullptr;
  png_infop info = nullptr;
  PngError error;
  MemoryReader reader{};
  // As the file declares it (phase 1), then as decoded (phase 2).
  png_uint_32 width = 0, height = 0;
  int channels = 0, bit_depth = 0;
  std::size_t row_bytes = 0;
};

struct PngReadGuard {
  PngReadState& s;
  ~PngReadGuard() {
    if (s.png != nullptr) png_destroy_read_struct(&s.png, s.info != nullptr ? &s.info : nullptr, nullptr);
  }
};

// libpng keeps none of the chunks it skips here (every ancillary one); these caps bound what
// it would hold should a libpng version handle one anyway. Its own defaults, made explicit.
constexpr png_alloc_size_t kChunkMallocMax = 8'000'000;
constexpr png_uint_32 kChunkCacheMax = 1000;

// Phase 1: the chunks up to the image data; nothing is allocated for pixels. Returns false
// with s.error set on failure.
bool png_read_header(PngReadState& s) {
  if (!png_create(s, png_create_read_struct, "decoder")) return false;
  if (setjmp(png_jmpbuf(s.png))) return false;
  png_set_read_fn(s.png, &s.reader, read_from_memory);
  // Dimensions are held against DecodeLimits by the caller, with a message that says how
  // to raise them; lift libpng's 10^6 default to the format's own maximum.
  png_set_user_limits(s.png, 0x7fffffff, 0x7fffffff);
  png_set_chunk_malloc_max(s.png, kChunkMallocMax);
  png_set_chunk_cache_max(s.png, kChunkCacheMax);
  // Skip every chunk but IHDR, PLTE, tRNS, IDAT and IEND without reading it into memory:
  // nothing here uses text, profiles or gamma, and libpng would allocate an ancillary chunk
  // at its declared length (only warning that it is too large).
  png_set_keep_unknown_chunks(s.png, PNG_HANDLE_CHUNK_NEVER, nullptr, -1);
  png_read_info(s.png, s.info);
  s.width = png_get_image_width(s.png, s.info);
  s.height = png_get_image_height(s.png, s.info);
  s.channels = png_get_channels(s.png, s.info);
  s.bit_depth = png_get_bit_depth(s.png, s.info);
  return true;
}

// Phase 2: transforms to 8/16-bit gray, gray+alpha, RGB or RGBA; libpng allocates its row
// buffers here.
bool png_set_transforms(PngReadState& s, bool strip_16) {
  if (setjmp(png_jmpbuf(s.png))) return false;
  const int color_type = png_get_color_type(s.png, s.info);
  const int depth = png_get_bit_depth(s.png, s.info);
  if (color_type == PNG_COLOR_TYPE_PALETTE) png_set_palette_to_rgb(s.png);
  if (color_type == PNG_COLOR_TYPE_GRAY && depth < 8) png_set_expand_gray_1_2_4_to_8(s.png);
  if (png_get_valid(s.png, s.info, PNG_INFO_tRNS)) png_set_tRNS_to_alpha(s.png);
  if (depth == 16) {
    if (strip_16)
      png_set_scale_16(s.png);
    else if constexpr (std::endian::native == std::endian::little)
      png_set_swap(s.png);  // PNG stores big-endian; Image holds native uint16
  }
  png_set_interlace_handling(s.png);
  png_read_update_info(s.png, s.info);
  s.width = png_get_image_width(s.png, s.info);
  s.height = png_get_image_height(s.png, s.info);
  s.channels = png_get_channels(s.png, s.info);
  s.bit_depth = png_get_bit_depth(s.png, s.info);
  s.row_bytes = png_get_rowbytes(s.png, s.info);
  return true;
}

// Phase 3: the pixels, into rows the caller allocated.
bool png_read_pixels(PngReadState& s, png_bytep* rows) {
  if (setjmp(png_jmpbuf(s.png))) return false;
  png_read_image(s.png, rows);
  png_read_end(s.png, nullptr);
  return true;
}

struct PngWriteState {
  png_structp png = nullptr;
  png_infop info = nullptr;
  PngError error;
  std::vector<std::byte>* out = nullptr;
  int filters = PNG_ALL_FILTERS;  // png_set_filter mask
  int strategy = Z_FILTERED;      // zlib strategy
  int level = 6;
};

int filter_mask(PngFilter filter) noexcept {
  switch (filter) {
    case PngFilter::none: return PNG_FILTER_NONE;
    case PngFilter::sub: return PNG_FILTER_SUB;
    case PngFilter::up: return PNG_FILTER_UP;
    case PngFilter::average: return PNG_FILTER_AVG;
    case PngFilter::paeth: return PNG_FILTER_PAETH;
    case PngFilter::all:
    case PngFilter::automatic: break;
  }
  return PNG_ALL_FILTERS;
}

int zlib_strategy(PngStrategy strategy) noexcept {
  switch (strategy) {
    case PngStrategy::deflate: return Z_DEFAULT_STRATEGY;
    case PngStrategy::rle: return Z_RLE;
    case PngStrategy::huffman: return Z_HUFFMAN_ONLY;
    case PngStrategy::filtered:
    case PngStrategy::fast:  // never reaches zlib (encode_png)
    case PngStrategy::automatic: break;
  }
  return Z_FILTERED;
}

struct PngWriteGuard {
  PngWriteState& s;
  ~PngWriteGuard() {
    if (s.png != nullptr) png_destroy_write_struct(&s.png, s.info != nullptr ? &s.info : nullptr);
  }
};

void write_to_vector(png_structp png, png_bytep data, png_size_t length) {
  auto* s = static_cast<PngWriteState*>(png_get_io_ptr(png));
  bool failed = false;
  try {
    const auto* bytes = reinterpret_cast<const std::byte*>(data);
    s->out->insert(s->out->end(), bytes, bytes + length);
  } catch (...) {
    failed = true;  // no exception may cross libpng; longjmp only after the handler ended
  }
  if (failed) png_error(png, "out of memory while encoding");
}

void flush_nothing(png_structp) {}

bool png_write(PngWriteState& s, const Image& image, png_bytep* rows, bool interlaced) {
  if (!png_create(s, png_create_write_struct, "encoder")) return false;
  if (setjmp(png_jmpbuf(s.png))) return false;
  png_set_write_fn(s.png, &s, write_to_vector, flush_nothing);
  static constexpr int color_types[5] = {0, PNG_COLOR_TYPE_GRAY, PNG_COLOR_TYPE_GRAY_ALPHA,
                                         PNG_COLOR_TYPE_RGB, PNG_COLOR_TYPE_RGB_ALPHA};
  png_set_IHDR(s.png, s.info, image.width, image.height, image.bit_depth, color_types[image.channels],
               interlaced ? PNG_INTERLACE_ADAM7 : PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT,
               PNG_FILTER_TYPE_DEFAULT);
  // Called before png_write_info, so that the choice also holds for the first rows.
  png_set_filter(s.png, PNG_FILTER_TYPE_BASE, s.filters);
  png_set_compression_level(s.png, s.level);
  png_set_compression_strategy(s.png, s.strategy);
  png_write_info(s.png, s.info);
  if constexpr (std::endian::native == std::endian::little)
    if (image.bit_depth == 16) png_set_swap(s.png);
  if (interlaced) png_set_interlace_handling(s.png);
  png_write_image(s.png, rows);
  png_write_end(s.png, nullptr);
  return true;
}

}  // namespace

namespace detail {

Image decode_png(std::span<const std::byte> data, const ImageReadOptions& options, const std::string& source) {
  const PngChunkWalk walk = walk_png_chunks(data, source);
  PngReadState s;
  PngReadGuard guard{s};
  s.reader = MemoryReader{reinterpret_cast<const png_byte*>(data.data()), data.size(), 0};
  if (!png_read_header(s)) throw ImageError(source, fmt::format("PNG: {}", s.error.message));
  options.limits.check(s.width, s.height, source);
  const auto file_bits = static_cast<unsigned>(s.channels * s.bit_depth);
  if (!png_data_can_hold(walk.idat_bytes, s.width, s.height, file_bits))
    throw ImageError(source, fmt::format("PNG: {} bytes of image data cannot hold a {}x{} image of {} bits per "
                                         "pixel (deflate expands at most 1032:1): truncated or corrupt file",
                                         walk.idat_bytes, s.width, s.height, file_bits));
  if (!png_set_transforms(s, options.strip_16)) throw ImageError(source, fmt::format("PNG: {}", s.error.message));
  if (s.bit_depth != 8 && s.bit_depth != 16)
    throw ImageError(source, fmt::format("PNG: unsupported bit depth {} after expansion", s.bit_depth));
  if (s.channels < 1 || s.channels > 4)
    throw ImageError(source, fmt::format("PNG: unsupported channel count {}", s.channels));
  check_decoded_size(s.width, s.height, static_cast<std::uint64_t>(s.channels) * (s.bit_depth / 8),
                     options.max_bytes, source);
  Image image = Image::make(s.width, s.height, s.channels, s.bit_depth);
  if (s.row_bytes != image.row_bytes())
    throw ImageError(source, fmt::format("PNG: row of {} bytes, expected {}", s.row_bytes, image.row_bytes()));
  std::vector<png_bytep> rows(s.height);
  for (std::size_t y = 0; y < s.height; ++y) rows[y] = image.pixels.data() + y * image.row_bytes();
  if (!png_read_pixels(s, rows.data())) throw ImageError(source, fmt::format("PNG: {}", s.error.message));
  return image;
}

}  // namespace detail

std::string_view to_string(PngFilter filter) noexcept {
  switch (filter) {
    case PngFilter::automatic: return "auto";
    case PngFilter::none: return "none";
    case PngFilter::sub: return "sub";
    case PngFilter::up: return "up";
    case PngFilter::average: return "avg";
    case PngFilter::paeth: return "paeth";
    case PngFilter::all: return "all";
  }
  return "?";
}

std::string_view to_string(PngStrategy strategy) noexcept {
  switch (strategy) {
    case PngStrategy::automatic: return "auto";
    case PngStrategy::deflate: return "default";
    case PngStrategy::filtered: return "filtered";
    case PngStrategy::rle: return "rle";
    case PngStrategy::huffman: return "huffman";
    case PngStrategy::fast: return "fast";
  }
  return "?";
}

std::optional<PngFilter> parse_png_filter(std::string_view name) {
  for (auto f : {PngFilter::automatic, PngFilter::none, PngFilter::sub, PngFilter::up, PngFilter::average,
                 PngFilter::paeth, PngFilter::all})
    if (name == to_string(f)) return f;
  if (name == "average") return PngFilter::average;
  return std::nullopt;
}

std::optional<PngStrategy> parse_png_strategy(std::string_view name) {
  for (auto s : {PngStrategy::automatic, PngStrategy::deflate, PngStrategy::filtered, PngStrategy::rle,
                 PngStrategy::huffman, PngStrategy::fast})
    if (name == to_string(s)) return s;
  if (name == "deflate") return PngStrategy::deflate;
  return std::nullopt;
}

// The table in image.hpp; bench/png_encode measures the alternatives (docs/image-io.md).
PngEncoding resolve_png_encoding(const PngWriteOptions& options) {
  const int level = options.compression;
  if (level < 0 || level > 9) throw std::invalid_argument(fmt::format("PNG compression level {} is not in 0-9", level));
  PngEncoding e{options.filter, options.strategy, level};
  if (e.filter == PngFilter::automatic)
    e.filter = level == 0 ? PngFilter::none : level == 1 ? PngFilter::up : PngFilter::all;
  if (e.strategy == PngStrategy::automatic)
    e.strategy = level == 1 && e.filter != PngFilter::all && !options.interlaced ? PngStrategy::fast
                 : (level == 1 || level == 2)                                   ? PngStrategy::rle
                 : e.filter == PngFilter::none ? PngStrategy::deflate  // libpng's rule
                                               : PngStrategy::filtered;
  if (e.strategy == PngStrategy::fast && (e.filter == PngFilter::all || options.interlaced))
    throw std::invalid_argument("the fast PNG encoder writes one fixed filter and no interlacing");
  return e;
}

std::vector<std::byte> encode_png(const Image& image, const PngWriteOptions& options) {
  image.validate();
  const PngEncoding encoding = resolve_png_encoding(options);
  if (encoding.strategy == PngStrategy::fast) return detail::encode_png_fast(image, encoding.filter);
  std::vector<std::byte> out;
  out.reserve(image.size_bytes() / 2 + 1024);
  std::vector<png_bytep> rows(image.height);
  // libpng takes non-const rows but does not modify them when writing.
  auto* base = const_cast<png_bytep>(image.pixels.data());
  for (std::size_t y = 0; y < image.height; ++y) rows[y] = base + y * image.row_bytes();
  PngWriteState s;
  s.out = &out;
  s.filters = filter_mask(encoding.filter);
  s.strategy = zlib_strategy(encoding.strategy);
  s.level = encoding.level;
  PngWriteGuard guard{s};
  if (!png_write(s, image, rows.data(), options.interlaced))
    throw std::runtime_error(fmt::format("PNG encoding failed: {}", s.error.message));
  return out;
}

}  // namespace streampipe::io
