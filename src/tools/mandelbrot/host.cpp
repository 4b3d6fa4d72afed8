// SPDX-License-Identifier: Apache-2.0
// The host reference and backend. Compiled with -ffp-contract=off (src/tools/CMakeLists.txt)
// so that no multiply-add is fused: the results are the device's, bit for bit.

#include "escape.hpp"
#include "streampipe/io/allocation_error.hpp"
#include "streampipe/tools/mandelbrot/compute.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <stdexcept>
#include <system_error>
#include <thread>

namespace streampipe::tools::mandelbrot {
namespace {

// The host's unit of work: a piece of a row at least this wide, at most this many per row.
constexpr std::uint32_t kPixelsPerPiece = 256;
constexpr std::uint32_t kMostPiecesPerRow = 16;

}  // namespace

Region Region::centered(double cx, double cy, double width, std::uint32_t pixels_wide, std::uint32_t pixels_high) {
  if (!(width > 0) || !std::isfinite(width) || pixels_wide == 0 || pixels_high == 0)
    throw std::invalid_argument("a centred region needs a positive width and pixel size");
  const double height = width * pixels_high / pixels_wide;
  return Region{cx - width / 2, cx + width / 2, cy - height / 2, cy + height / 2};
}

std::string_view to_string(Precision p) noexcept { return p == Precision::single ? "float" : "double"; }

std::optional<Precision> parse_precision(std::string_view name) noexcept {
  if (name == "float" || name == "single") return Precision::single;
  if (name == "double") return Precision::double_;
  return std::nullopt;
}

void Params::validate() const {
  if (width == 0 || height == 0) throw std::invalid_argument(fmt::format("image size {}x{} is empty", width, height));
  if (std::uint64_t{width} * height > (std::uint64_t{1} << 32))
    throw std::invalid_argument(fmt::format("image size {}x{} is too large", width, height));
  if (max_iterations == 0) throw std::invalid_argument("iterations must be at least 1");
  const double v[4] = {region.x0, region.x1, region.y0, region.y1};
  for (double d : v)
    if (!std::isfinite(d)) throw std::invalid_argument("the region has a non-finite bound");
  if (!(region.x1 > region.x0)) throw std::invalid_argument(fmt::format("region x1 {} is not above x0 {}", region.x1, region.x0));
  if (!(region.y1 > region.y0)) throw std::invalid_argument(fmt::format("region y1 {} is not above y0 {}", region.y1, region.y0));
}

std::vector<std::uint32_t> compute_host(const Params& p, Precision precision, unsigned threads) {
  p.validate();
  return compute_host_rows(p, precision, RowBand{0, p.height}, threads);
}

std::vector<std::uint32_t> compute_host_rows(const Params& p, Precision precision, RowBand band, unsigned threads) {
  p.validate();
  if (band.first_row > p.height || band.rows > p.height - band.first_row)
    throw std::invalid_argument(fmt::format("rows {}+{} leave a {}-row image", band.first_row, band.rows, p.height));
  const std::size_t pixels = std::size_t{band.rows} * p.width;
  std::vector<std::uint32_t> counts;
  try {
    counts.resize(pixels);
  } catch (const std::bad_alloc&) {
    throw io::AllocationError(std::uint64_t{pixels} * sizeof(std::uint32_t),
                              band.rows == p.height
                                  ? fmt::format("the escape counts of a {}x{} image", p.width, p.height)
                                  : fmt::format("the escape counts of {} rows of a {}x{} image", band.rows, p.width,
                                                p.height));
  }
  compute_host_rows_into(p, precision, band, counts, threads);
  return counts;
}

void compute_host_rows_into(const Params& p, Precision precision, RowBand band, std::span<std::uint32_t> counts,
                            unsigned threads) {
  p.validate();
  if (band.first_row > p.height || band.rows > p.height - band.first_row)
    throw std::invalid_argument(fmt::format("rows {}+{} leave a {}-row image", band.first_row, band.rows, p.height));
  if (counts.size() != std::size_t{band.rows} * p.width)
    throw std::invalid_argument(fmt::format("{} counts for {} rows of {} pixels", counts.size(), band.rows, p.width));
  if (band.rows == 0) return;
  const double dx = (p.region.x1 - p.region.x0) / p.width, dy = (p.region.y1 - p.region.y0) / p.height;
  if (threads == 0) threads = std::max(1u, std::thread::hardware_concurrency());
  // Pieces of rows are handed out one at a time: rows inside the set cost far more than
  // others, and a band ends only when its last piece does, so the pieces are small enough
  // that the cores finish a band together (a whole row of a wide image inside the set takes
  // milliseconds).
  const std::uint32_t pieces_per_row = std::clamp<std::uint32_t>(p.width / kPixelsPerPiece, 1, kMostPiecesPerRow);
  const std::uint64_t pieces = std::uint64_t{band.rows} * pieces_per_row;
  threads = static_cast<unsigned>(std::min<std::uint64_t>(threads, pieces));
  std::atomic<std::uint64_t> next_piece{0};
  const auto work = [&] {
    for (std::uint64_t piece = next_piece++; piece < pieces; piece = next_piece++) {
      const auto row = static_cast<std::uint32_t>(piece / pieces_per_row);
      const auto part = static_cast<std::uint32_t>(piece % pieces_per_row);
      const std::uint32_t x_begin = static_cast<std::uint32_t>(std::uint64_t{p.width} * part / pieces_per_row);
      const std::uint32_t x_end = static_cast<std::uint32_t>(std::uint64_t{p.width} * (part + 1) / pieces_per_row);
      const std::uint32_t y = band.first_row + row;  // the image's row: its coordinates
      const double cy = detail::sub(p.region.y1, detail::mul(detail::add(static_cast<double>(y), 0.5), dy));
      for (std::uint32_t x = x_begin; x < x_end; ++x) {
        const double cx = detail::pixel_coordinate(p.region.x0, dx, x);
        counts[std::size_t{row} * p.width + x] =
            precision == Precision::double_
                ? detail::escape_count<double>(cx, cy, p.max_iterations)
                : detail::escape_count<float>(static_cast<float>(cx), static_cast<float>(cy), p.max_iterations);
      }
    }
  };
  std::vector<std::jthread> pool;
  for (unsigned t = 1; t < threads; ++t) {
    try {
      pool.emplace_back(work);
    } catch (const std::system_error&) {
      break;  // no more threads (a process limit): those started and this one take the rows
    }
  }
  work();
}

Comparison compare(const std::vector<std::uint32_t>& ref, const std::vector<std::uint32_t>& got, std::uint32_t width,
                   std::uint32_t height) {
  if (ref.size() != std::size_t{width} * height || got.size() != ref.size())
    throw std::invalid_argument("compare: the count arrays do not match the size");
  Comparison c;
  for (std::uint32_t y = 0; y < height; ++y)
    for (std::uint32_t x = 0; x < width; ++x) {
      const std::size_t i = std::size_t{y} * width + x;
      if (ref[i] == got[i]) continue;
      ++c.differing;
      c.max_difference = std::max(c.max_difference, ref[i] > got[i] ? ref[i] - got[i] : got[i] - ref[i]);
      bool boundary = false;
      for (int oy = -1; oy <= 1 && !boundary; ++oy)
        for (int ox = -1; ox <= 1 && !boundary; ++ox) {
          const long long nx = static_cast<long long>(x) + ox, ny = static_cast<long long>(y) + oy;
          if (nx < 0 || ny < 0 || nx >= width || ny >= height) continue;
          boundary = ref[static_cast<std::size_t>(ny) * width + static_cast<std::size_t>(nx)] != ref[i];
        }
      if (boundary) ++c.differing_boundary;
    }
  return c;
}

io::Image colorize(const std::vector<std::uint32_t>& counts, std::uint32_t width, std::uint32_t height,
                   std::uint32_t max_iterations) {
  if (counts.size() != std::size_t{width} * height) throw std::invalid_argument("colorize: counts do not match the size");
  struct Stop {
    double t, r, g, b;
  };
  static constexpr Stop stops[] = {{0.0, 0, 7, 100},      {0.16, 32, 107, 203}, {0.42, 237, 255, 255},
                                   {0.6425, 255, 170, 0}, {0.8575, 0, 2, 0},    {1.0, 0, 7, 100}};
  io::Image img = io::Image::make(width, height, 3);
  for (std::size_t i = 0; i < counts.size(); ++i) {
    std::uint8_t* px = img.pixels.data() + 3 * i;
    if (counts[i] >= max_iterations) continue;  // inside: black
    // sqrt spreads the many low counts; a period of 16 sqrt-units cycles the palette.
    const double s = std::sqrt(static_cast<double>(counts[i])) / 4.0;
    const double t = s - std::floor(s);
    std::size_t k = 0;
    while (k + 2 < std::size(stops) && t > stops[k + 1].t) ++k;
    const Stop& a = stops[k];
    const Stop& b = stops[k + 1];
    const double f = (t - a.t) / (b.t - a.t);
    px[0] = static_cast<std::uint8_t>(std::lround(a.r + f * (b.r - a.r)));
    px[1] = static_cast<std::uint8_t>(std::lround(a.g + f * (b.g - a.g)));
    px[2] = static_cast<std::uint8_t>(std::lround(a.b + f * (b.b - a.b)));
  }
  return img;
}

}  // namespace streampipe::tools::mandelbrot
