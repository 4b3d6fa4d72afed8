// SPDX-License-Identifier: Apache-2.0
#pragma once
// The Mandelbrot set: escape counts per pixel, on the GPU in float or double and on the
// host (the double reference), a colour map to an RGB image, and a comparison that says
// how many pixels differ from the reference and how many of those sit on an escape
// boundary (a pixel whose reference neighbourhood holds more than one count).
//
// Pixel (px, py) samples c = (x0 + (px + 0.5) dx, y1 - (py + 0.5) dy) with dx = (x1-x0)/W,
// dy = (y1-y0)/H: row 0 is the top (largest imaginary part). z starts at 0; the count is
// the first i with |z_i|^2 > 4, or max_iterations if none. Every operation is a separately
// rounded IEEE multiply or add (no fused multiply-add, on host or device), so a kernel and
// the host agree bit for bit at the same precision.

#include "streampipe/cuda/stream.hpp"
#include "streampipe/io/image.hpp"

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

namespace streampipe::tools::mandelbrot {

struct Region {
  double x0 = -2.5, x1 = 1.0;   // real axis
  double y0 = -1.25, y1 = 1.25;  // imaginary axis

  // A region `width` units wide centred on (cx, cy), its height from the pixel aspect.
  [[nodiscard]] static Region centered(double cx, double cy, double width, std::uint32_t pixels_wide,
                                       std::uint32_t pixels_high);
};

enum class Precision { single, double_ };
[[nodiscard]] std::string_view to_string(Precision p) noexcept;
[[nodiscard]] std::optional<Precision> parse_precision(std::string_view name) noexcept;  // float|double

struct Params {
  std::uint32_t width = 1024, height = 768;
  Region region;
  std::uint32_t max_iterations = 256;

  // Throws std::invalid_argument naming the bad field (empty size, empty or non-finite
  // region, zero iterations).
  void validate() const;
  [[nodiscard]] std::size_t pixels() const noexcept { return std::size_t{width} * height; }
};

// Rows [first_row, first_row + rows) of an image: a part computed apart (on its own device)
// with the whole image's pixel coordinates, so that its counts are those rows' counts.
struct RowBand {
  std::uint32_t first_row = 0;
  std::uint32_t rows = 0;
  friend bool operator==(const RowBand&, const RowBand&) = default;
};

// Host: threads == 0 uses every core.
[[nodiscard]] std::vector<std::uint32_t> compute_host(const Params& params, Precision precision,
                                                      unsigned threads = 0);
// Host, one band: band.rows x width counts. Throws std::invalid_argument for a band that
// leaves the image.
[[nodiscard]] std::vector<std::uint32_t> compute_host_rows(const Params& params, Precision precision, RowBand band,
                                                           unsigned threads = 0);
// The same into `counts`, which holds exactly band.rows x width. Throws std::invalid_argument
// for a band that leaves the image or counts of another size.
void compute_host_rows_into(const Params& params, Precision precision, RowBand band, std::span<std::uint32_t> counts,
                            unsigned threads = 0);
// Device: writes params.pixels() counts to `counts` (device memory), enqueued on `stream`.
void compute_device(StreamRef stream, const Params& params, Precision precision, std::uint32_t* counts);
// Device, one band: writes band.rows x width counts to `counts` (device memory of the
// stream's device), enqueued on `stream`; an empty band enqueues nothing. Throws
// std::invalid_argument for a band that leaves the image.
void compute_device_rows(StreamRef stream, const Params& params, Precision precision, RowBand band,
                         std::uint32_t* counts);
// Device, one band whose RowBand is in device memory (an engine item's input, read by the
// kernel): writes `rows` x width counts, rows being the band's as the host knows them (the
// launch's size; the kernel writes no row beyond band->rows either). Rows 0 enqueues nothing.
void compute_device_band(StreamRef stream, const Params& params, Precision precision, const RowBand* band,
                         std::uint32_t rows, std::uint32_t* counts);

struct Comparison {
  std::uint64_t differing = 0;           // pixels whose count differs from the reference
  std::uint64_t differing_boundary = 0;  // of those, on an escape boundary
  std::uint32_t max_difference = 0;      // largest |count - reference|
};
[[nodiscard]] Comparison compare(const std::vector<std::uint32_t>& reference, const std::vector<std::uint32_t>& counts,
                                 std::uint32_t width, std::uint32_t height);

// Black inside the set; outside, a cyclic blue-white-orange gradient over sqrt(count).
[[nodiscard]] io::Image colorize(const std::vector<std::uint32_t>& counts, std::uint32_t width,
                                 std::uint32_t height, std::uint32_t max_iterations);

}  // namespace streampipe::tools::mandelbrot
