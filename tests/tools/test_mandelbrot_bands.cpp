// SPDX-License-Identifier: Apache-2.0
// Mandelbrot spread over devices: the band split's arithmetic, and bands computed apart on
// the host giving the whole image's counts.

#include "streampipe/tools/mandelbrot/bands.hpp"

#include <gtest/gtest.h>

#include <stdexcept>

namespace streampipe::tools::mandelbrot {
namespace {

TEST(MandelbrotBands, SplitCoversEveryRowOnceWithinOneRow) {
  for (const std::uint32_t height : {1u, 2u, 7u, 1080u, 1081u, 65535u})
    for (const std::size_t n : {std::size_t{1}, std::size_t{2}, std::size_t{3}, std::size_t{8}, std::size_t{13}}) {
      const auto bands = split_rows(height, n);
      ASSERT_EQ(bands.size(), n);
      std::uint32_t next = 0, smallest = height, largest = 0;
      for (const auto& b : bands) {
        EXPECT_EQ(b.first_row, next) << height << " rows in " << n;  // contiguous, top to bottom
        next += b.rows;
        smallest = std::min(smallest, b.rows);
        largest = std::max(largest, b.rows);
      }
      EXPECT_EQ(next, height) << height << " rows in " << n;
      EXPECT_LE(largest - smallest, 1u) << height << " rows in " << n;
    }
}

TEST(MandelbrotBands, SplitExamples) {
  EXPECT_EQ(split_rows(7, 3), (std::vector<RowBand>{{0, 3}, {3, 2}, {5, 2}}));
  EXPECT_EQ(split_rows(1080, 2), (std::vector<RowBand>{{0, 540}, {540, 540}}));
  EXPECT_EQ(split_rows(2, 3), (std::vector<RowBand>{{0, 1}, {1, 1}, {2, 0}}));  // more bands than rows
  EXPECT_EQ(split_rows(0, 2), (std::vector<RowBand>{{0, 0}, {0, 0}}));
  EXPECT_THROW((void)split_rows(10, 0), std::invalid_argument);
}

TEST(MandelbrotBands, HostBandsEqualTheWholeImage) {
  Params p;
  p.width = 97;
  p.height = 61;
  p.region = Region::centered(-0.7436, 0.1318, 0.02, p.width, p.height);
  p.max_iterations = 400;
  for (const Precision prec : {Precision::double_, Precision::single}) {
    const auto whole = compute_host(p, prec, 2);
    for (const std::vector<int>& simulated : {std::vector<int>{0}, std::vector<int>{0, 1}, std::vector<int>{2, 0, 1}}) {
      const SpreadRun run = compute_spread_host(simulated, p, prec, 2);
      EXPECT_EQ(run.counts, whole) << to_string(prec) << ", " << simulated.size() << " bands";
      ASSERT_EQ(run.bands.size(), simulated.size());
      for (std::size_t i = 0; i < simulated.size(); ++i) EXPECT_EQ(run.bands[i].device, simulated[i]);
      EXPECT_GE(run.complete_ms, run.enqueue_begin_ms);
    }
  }
  EXPECT_THROW((void)compute_spread_host(std::span<const int>{}, p, Precision::double_), std::invalid_argument);
}

TEST(MandelbrotBands, HostRowsRefuseABandOutsideTheImage) {
  Params p;
  p.width = 8;
  p.height = 4;
  EXPECT_EQ(compute_host_rows(p, Precision::double_, {4, 0}).size(), 0u);
  EXPECT_THROW((void)compute_host_rows(p, Precision::double_, {3, 2}), std::invalid_argument);
  EXPECT_THROW((void)compute_host_rows(p, Precision::double_, {5, 0}), std::invalid_argument);
  const auto whole = compute_host(p, Precision::double_, 1);
  const auto last_rows = compute_host_rows(p, Precision::double_, {2, 2}, 1);
  EXPECT_EQ(last_rows, std::vector<std::uint32_t>(whole.begin() + 16, whole.end()));
}

}  // namespace
}  // namespace streampipe::tools::mandelbrot
