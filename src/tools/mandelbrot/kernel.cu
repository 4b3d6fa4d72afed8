// SPDX-License-Identifier: Apache-2.0
#include "escape.hpp"
#include "streampipe/cuda/launch.hpp"
#include "streampipe/tools/mandelbrot/compute.hpp"

#include <stdexcept>
#include <string>

namespace streampipe::tools::mandelbrot {
namespace {

// One pixel of row `row` of a band starting at the image's row `first_row`.
template <typename T>
__device__ __forceinline__ void band_pixel(std::uint32_t* __restrict__ counts, std::uint32_t width,
                                           std::uint32_t first_row, std::uint32_t x, std::uint32_t row, double x0,
                                           double y1, double dx, double dy, std::uint32_t max_iterations) {
  // The image's row, not the band's: a band's pixels are the whole image's pixels.
  const std::uint32_t y = first_row + row;
  const double cx = detail::pixel_coordinate(x0, dx, x);
  const double cy = detail::sub(y1, detail::mul(detail::add(static_cast<double>(y), 0.5), dy));
  counts[std::size_t{row} * width + x] =
      detail::escape_count<T>(static_cast<T>(cx), static_cast<T>(cy), max_iterations);
}

template <typename T>
__global__ void mandelbrot_kernel(std::uint32_t* __restrict__ counts, std::uint32_t width, std::uint32_t first_row,
                                  std::uint32_t rows, double x0, double y1, double dx, double dy,
                                  std::uint32_t max_iterations) {
  const std::uint32_t x = blockIdx.x * blockDim.x + threadIdx.x;
  const std::uint32_t row = blockIdx.y * blockDim.y + threadIdx.y;  // within the band
  if (x >= width || row >= rows) return;
  band_pixel<T>(counts, width, first_row, x, row, x0, y1, dx, dy, max_iterations);
}

// The same with the band read from device memory, where the engine copied the item's input.
template <typename T>
__global__ void mandelbrot_band_kernel(std::uint32_t* __restrict__ counts, const RowBand* __restrict__ band,
                                       std::uint32_t width, std::uint32_t rows, double x0, double y1, double dx,
                                       double dy, std::uint32_t max_iterations) {
  const std::uint32_t x = blockIdx.x * blockDim.x + threadIdx.x;
  const std::uint32_t row = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= width || row >= rows || row >= band->rows) return;
  band_pixel<T>(counts, width, band->first_row, x, row, x0, y1, dx, dy, max_iterations);
}

LaunchConfig band_launch(std::uint32_t width, std::uint32_t rows) {
  LaunchConfig cfg;
  cfg.block = dim3(16, 16, 1);
  cfg.grid = dim3((width + 15) / 16, (rows + 15) / 16, 1);
  return cfg;
}

}  // namespace

void compute_device(StreamRef stream, const Params& p, Precision precision, std::uint32_t* counts) {
  compute_device_rows(stream, p, precision, RowBand{0, p.height}, counts);
}

void compute_device_rows(StreamRef stream, const Params& p, Precision precision, RowBand band, std::uint32_t* counts) {
  p.validate();
  if (band.first_row > p.height || band.rows > p.height - band.first_row)
    // std::to_string: fmt's compile-time format strings do not build under nvcc.
    throw std::invalid_argument("rows " + std::to_string(band.first_row) + "+" + std::to_string(band.rows) +
                                " leave a " + std::to_string(p.height) + "-row image");
  if (band.rows == 0) return;
  const double dx = (p.region.x1 - p.region.x0) / p.width, dy = (p.region.y1 - p.region.y0) / p.height;
  const LaunchConfig cfg = band_launch(p.width, band.rows);
  if (precision == Precision::double_)
    launch(stream, cfg, mandelbrot_kernel<double>, counts, p.width, band.first_row, band.rows, p.region.x0,
           p.region.y1, dx, dy, p.max_iterations);
  else
    launch(stream, cfg, mandelbrot_kernel<float>, counts, p.width, band.first_row, band.rows, p.region.x0,
           p.region.y1, dx, dy, p.max_iterations);
}

void compute_device_band(StreamRef stream, const Params& p, Precision precision, const RowBand* band,
                         std::uint32_t rows, std::uint32_t* counts) {
  p.validate();
  if (rows > p.height)
    throw std::invalid_argument(std::to_string(rows) + " rows leave a " + std::to_string(p.height) + "-row image");
  if (rows == 0) return;
  const double dx = (p.region.x1 - p.region.x0) / p.width, dy = (p.region.y1 - p.region.y0) / p.height;
  const LaunchConfig cfg = band_launch(p.width, rows);
  if (precision == Precision::double_)
    launch(stream, cfg, mandelbrot_band_kernel<double>, counts, band, p.width, rows, p.region.x0, p.region.y1, dx,
           dy, p.max_iterations);
  else
    launch(stream, cfg, mandelbrot_band_kernel<float>, counts, band, p.width, rows, p.region.x0, p.region.y1, dx,
           dy, p.max_iterations);
}

}  // namespace streampipe::tools::mandelbrot
