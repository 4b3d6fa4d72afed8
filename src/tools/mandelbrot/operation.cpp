// SPDX-License-Identifier: Apache-2.0
// The engine's operation on one band (see tools/mandelbrot/bands.hpp): the escape kernel on
// the lane's stream, or the host's rows on the CPU, both from the item's RowBand.
#include "streampipe/tools/mandelbrot/bands.hpp"

#include <fmt/format.h>

#include <cstring>
#include <span>
#include <stdexcept>

namespace streampipe::tools::mandelbrot {
namespace {

// The band's rows as its output's size says, after checking the item's shape.
std::uint32_t band_rows(const pipeline::ItemDescriptor& item, std::uint32_t width) {
  const std::size_t row_bytes = std::size_t{width} * sizeof(std::uint32_t);
  if (item.in_bytes != sizeof(RowBand))
    throw std::invalid_argument(fmt::format("a Mandelbrot band's input is a RowBand of {} bytes, not {} bytes",
                                            sizeof(RowBand), item.in_bytes));
  if (item.out_bytes % row_bytes != 0)
    throw std::invalid_argument(
        fmt::format("a Mandelbrot band's output of {} bytes is not whole rows of {} pixels", item.out_bytes, width));
  return static_cast<std::uint32_t>(item.out_bytes / row_bytes);
}

}  // namespace

pipeline::Operation band_operation(const Params& p, Precision precision, unsigned host_threads) {
  p.validate();
  pipeline::Operation op;
  op.name = fmt::format("mandelbrot {} band", to_string(precision));
  op.device = [p, precision](const pipeline::Batch& b) {
    for (std::size_t k = 0; k < b.size(); ++k)
      compute_device_band(b.stream(), p, precision, b.in_as<const RowBand>(k), band_rows(b.items()[k], p.width),
                          b.out_as<std::uint32_t>(k));
  };
  op.host = [p, precision, host_threads](const pipeline::Batch& b) {
    for (std::size_t k = 0; k < b.size(); ++k) {
      const std::uint32_t rows = band_rows(b.items()[k], p.width);
      RowBand band;
      std::memcpy(&band, b.in_as<const std::byte>(k), sizeof band);
      if (band.rows != rows)
        throw std::invalid_argument(
            fmt::format("a Mandelbrot band of {} rows was given the output of {} rows", band.rows, rows));
      compute_host_rows_into(p, precision, band, std::span(b.out_as<std::uint32_t>(k), std::size_t{rows} * p.width),
                             host_threads);
    }
  };
  return op;
}

}  // namespace streampipe::tools::mandelbrot
