// SPDX-License-Identifier: Apache-2.0
// How an image's rows are cut into bands (see tools/mandelbrot/bands.hpp).
#include "streampipe/tools/mandelbrot/bands.hpp"

#include <algorithm>
#include <stdexcept>

namespace streampipe::tools::mandelbrot {
namespace {

// A lane holds a band or two at once (one computing, the next waiting so that the lane never
// idles between bands). The bands beyond those are what the engine deals by speed: the more
// rounds, the closer a device's share follows its speed, and the smaller the last round,
// where the rows inside the set (which cost the most) may all fall on one lane.
constexpr std::size_t kBandsPerLane = 8;

}  // namespace

std::vector<RowBand> split_rows(std::uint32_t height, std::size_t bands) {
  if (bands == 0) throw std::invalid_argument("split_rows: no bands");
  std::vector<RowBand> out;
  out.reserve(bands);
  const std::uint32_t base = static_cast<std::uint32_t>(height / bands);
  const std::size_t taller = height % bands;
  std::uint32_t row = 0;
  for (std::size_t i = 0; i < bands; ++i) {
    const std::uint32_t rows = base + (i < taller ? 1u : 0u);
    out.push_back({row, rows});
    row += rows;
  }
  return out;
}

std::size_t band_count(std::uint32_t rows, std::size_t lanes) noexcept {
  const std::size_t wanted = std::max<std::size_t>(lanes, 1) * kBandsPerLane;
  return std::max<std::size_t>(1, std::min<std::size_t>(rows, wanted));
}

}  // namespace streampipe::tools::mandelbrot
