// SPDX-License-Identifier: Apache-2.0
// Mandelbrot's bands through the engine, without a GPU: the cut's arithmetic, bands dealt
// over the CPU's lane and simulated GPUs giving the whole image's counts exactly, every band
// delivered once and counted once in the devices' shares, and a slow device taking fewer.

#include "streampipe/tools/mandelbrot/bands.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <stdexcept>
#include <thread>

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

TEST(MandelbrotBands, SeveralBandsPerLaneNeverMoreThanTheRows) {
  const std::size_t per_lane = band_count(100000, 1);
  EXPECT_GE(per_lane, 2u);  // a lane always has its next band waiting
  for (const std::size_t lanes : {std::size_t{2}, std::size_t{5}, std::size_t{17}})
    EXPECT_EQ(band_count(100000, lanes), lanes * per_lane) << lanes << " lanes";
  EXPECT_EQ(band_count(3, 100), 3u);
  EXPECT_EQ(band_count(1, 1), 1u);
  EXPECT_EQ(band_count(500, 0), per_lane);  // no lane known: as for one
}

Params detailed(std::uint32_t width, std::uint32_t height) {
  Params p;
  p.width = width;
  p.height = height;
  p.region = Region::centered(-0.7436, 0.1318, 0.02, width, height);
  p.max_iterations = 400;
  return p;
}

pipeline::EngineOptions small_engine(pipeline::Backend backend, std::vector<int> simulated = {}) {
  pipeline::EngineOptions o;
  o.backend = backend;
  o.simulate_gpus = !simulated.empty();
  o.devices = std::move(simulated);
  o.lanes = 2;
  o.cpu_lanes = 1;
  o.host_threads = 2;
  return o;
}

// Every row in exactly one band, the bands in row order, and the shares adding up.
void expect_dealt_once(const BandsRun& run, RowBand part) {
  std::uint32_t next = part.first_row;
  for (const auto& b : run.bands) {
    EXPECT_EQ(b.band.first_row, next);
    EXPECT_GT(b.band.rows, 0u);
    next += b.band.rows;
  }
  EXPECT_EQ(next, part.first_row + part.rows);
  std::size_t bands = 0, rows = 0;
  for (const auto& d : run.devices) {
    bands += d.bands;
    rows += d.rows;
    const auto ran =
        std::count_if(run.bands.begin(), run.bands.end(), [&](const BandRun& b) { return b.device == d.device; });
    EXPECT_EQ(static_cast<std::size_t>(ran), d.bands) << d.name;
  }
  EXPECT_EQ(bands, run.bands.size());
  EXPECT_EQ(rows, part.rows);
}

TEST(MandelbrotBands, EverySetGivesTheWholeImageExactly) {
  const Params p = detailed(97, 61);
  using pipeline::Backend;
  for (const Precision prec : {Precision::double_, Precision::single}) {
    const auto whole = compute_host(p, prec, 2);
    for (const auto& options : {small_engine(Backend::host), small_engine(Backend::gpu, {0}),
                                small_engine(Backend::gpu, {0, 1}), small_engine(Backend::gpu, {2, 0, 1}),
                                small_engine(Backend::automatic, {0, 1})}) {
      const std::string set = std::string(pipeline::backend_name(options.backend)) + " with " +
                              std::to_string(options.devices.size()) + " simulated GPU(s)";
      const BandsRun run = compute_bands(band_operation(p, prec, 2), options, p, {0, p.height});
      EXPECT_EQ(run.counts, whole) << to_string(prec) << ", " << set;
      EXPECT_GT(run.bands.size(), 1u) << set;
      ASSERT_NO_FATAL_FAILURE(expect_dealt_once(run, {0, p.height})) << set;
      EXPECT_FALSE(run.gpu_ran);
      EXPECT_GT(run.compute_ms, 0.0);
      EXPECT_GE(run.query.complete_ms, run.query.enqueue_end_ms);
      EXPECT_GE(run.query.enqueue_end_ms, run.query.enqueue_begin_ms);
      EXPECT_FALSE(run.query.compute_ms.has_value());  // no GPU: no device stages
      for (const auto& d : run.devices)
        EXPECT_EQ(d.simulated, d.device != pipeline::kCpuDevice) << d.name;
    }
  }
}

TEST(MandelbrotBands, APartIsThoseRowsOfTheImage) {
  const Params p = detailed(40, 50);
  const auto whole = compute_host(p, Precision::double_, 1);
  const RowBand part{10, 23};
  const BandsRun run = compute_bands(band_operation(p, Precision::double_, 1),
                                     small_engine(pipeline::Backend::gpu, {0, 1}), p, part);
  ASSERT_EQ(run.counts.size(), std::size_t{part.rows} * p.width);
  EXPECT_TRUE(std::equal(run.counts.begin(), run.counts.end(), whole.begin() + std::size_t{part.first_row} * p.width));
  ASSERT_NO_FATAL_FAILURE(expect_dealt_once(run, part));
  // A rank with no rows has nothing to do; rows beyond the image are refused.
  EXPECT_TRUE(compute_bands(band_operation(p, Precision::double_), small_engine(pipeline::Backend::host), p, {50, 0})
                  .bands.empty());
  EXPECT_THROW((void)compute_bands(band_operation(p, Precision::double_), small_engine(pipeline::Backend::host), p,
                                   {40, 11}),
               std::invalid_argument);
}

// The engine deals by speed: a simulated GPU that takes far longer per band gets fewer.
TEST(MandelbrotBands, ASlowDeviceTakesFewerBands) {
  const Params p = detailed(32, 96);
  pipeline::Operation op = band_operation(p, Precision::double_, 1);
  op.host = [inner = op.host](const pipeline::Batch& b) {
    if (b.device() == 1) std::this_thread::sleep_for(std::chrono::milliseconds(20));
    inner(b);
  };
  const BandsRun run = compute_bands(op, small_engine(pipeline::Backend::gpu, {0, 1}), p, {0, p.height});
  EXPECT_EQ(run.counts, compute_host(p, Precision::double_, 1));
  ASSERT_EQ(run.devices.size(), 2u);
  const auto& fast = run.devices[0].device == 0 ? run.devices[0] : run.devices[1];
  const auto& slow = run.devices[0].device == 1 ? run.devices[0] : run.devices[1];
  EXPECT_LT(slow.bands, fast.bands) << "slow " << slow.bands << ", fast " << fast.bands;
  EXPECT_EQ(slow.bands + fast.bands, run.bands.size());
}

TEST(MandelbrotBands, TheOperationRefusesAMalformedBand) {
  const Params p = detailed(8, 4);
  const pipeline::Operation op = band_operation(p, Precision::double_, 1);
  RowBand band{1, 2};
  std::vector<std::uint32_t> out(3 * 8);  // three rows for a band of two
  const pipeline::ItemDescriptor item{0, sizeof band, 0, out.size() * sizeof(std::uint32_t)};
  const std::size_t index = 0;
  const pipeline::Batch batch(reinterpret_cast<std::byte*>(&band), sizeof band,
                              reinterpret_cast<std::byte*>(out.data()), item.out_bytes, std::span(&item, 1), nullptr, 0, pipeline::kCpuDevice, std::nullopt,
                              std::span(&index, 1));
  EXPECT_THROW(op.host(batch), std::invalid_argument);
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
  std::vector<std::uint32_t> wrong(15);
  EXPECT_THROW(compute_host_rows_into(p, Precision::double_, {2, 2}, wrong, 1), std::invalid_argument);
}

}  // namespace
}  // namespace streampipe::tools::mandelbrot
