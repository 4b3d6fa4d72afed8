// SPDX-License-Identifier: Apache-2.0
// tools::mandelbrot::run without a GPU: the image's bands dealt by the engine over the CPU
// (the host backend) or over simulated GPUs beside it, equal to the host reference, checked
// against it, reported per device and per band, and one query for the image.
#include "streampipe/tools/mandelbrot/report.hpp"
#include "streampipe/tools/mandelbrot/run.hpp"

#include <gtest/gtest.h>

namespace streampipe::tools::mandelbrot {
namespace {

Options small_image(pipeline::Backend backend, std::vector<int> simulated = {}) {
  Options o;
  o.params.width = 64;
  o.params.height = 40;
  o.params.max_iterations = 200;
  o.params.region = Region::centered(-0.75, 0.0, 3.5, 64, 40);
  o.engine.backend = backend;
  o.engine.simulate_gpus = !simulated.empty();
  o.engine.devices = std::move(simulated);
  return o;
}

std::size_t bands_of(const Summary& s) {
  std::size_t n = 0;
  for (const auto& d : s.devices) n += d.bands;
  return n;
}

TEST(MandelbrotRun, TheHostBackendGivesTheReference) {
  const Options o = small_image(pipeline::Backend::host);
  const Summary s = run(o);
  EXPECT_EQ(s.counts, compute_host(o.params, Precision::double_));
  ASSERT_TRUE(s.comparison.has_value());
  EXPECT_EQ(s.comparison->differing, 0u);
  EXPECT_FALSE(s.double_differs(o));
  EXPECT_FALSE(s.gpu_ran);
  EXPECT_EQ(s.device, "none");
  EXPECT_EQ(s.where, "the CPU");
  ASSERT_EQ(s.devices.size(), 1u);
  EXPECT_EQ(s.devices[0].device, pipeline::kCpuDevice);
  EXPECT_EQ(s.devices[0].bands, s.bands.size());
  EXPECT_EQ(s.devices[0].rows, o.params.height);
  EXPECT_GT(s.bands.size(), 1u);
  const auto latency = latency_run(o, s);
  ASSERT_EQ(latency.queries.size(), 1u);
  EXPECT_EQ(latency.sync, report::SyncMode::blocking);
  EXPECT_GT(latency.wall_ms, 0.0);
  const auto j = report_json(o, s);
  EXPECT_EQ(j.at("iterations_total"), s.total_iterations);
  EXPECT_EQ(j.at("backend"), "host");
  EXPECT_EQ(j.at("bands").size(), s.bands.size());
  EXPECT_EQ(j.at("devices").at(0).at("bands"), s.bands.size());
  const std::string text = report_text(o, s);
  EXPECT_NE(text.find("    the CPU: " + std::to_string(s.bands.size()) + " bands, 40 rows"), std::string::npos) << text;
}

TEST(MandelbrotRun, SimulatedGpusBesideTheCpuShareTheBands) {
  for (const Precision prec : {Precision::double_, Precision::single}) {
    Options o = small_image(pipeline::Backend::automatic, {0, 1, 2});
    o.precision = prec;
    const Summary s = run(o);
    EXPECT_EQ(s.counts, compute_host(o.params, prec)) << to_string(prec);
    EXPECT_FALSE(s.double_differs(o));
    ASSERT_EQ(s.devices.size(), 4u);  // the CPU and three simulated GPUs
    EXPECT_EQ(bands_of(s), s.bands.size());
    std::size_t rows = 0;
    for (const auto& d : s.devices) rows += d.rows;
    EXPECT_EQ(rows, o.params.height);
    const std::string text = report_text(o, s);
    EXPECT_NE(text.find(std::to_string(s.bands.size()) + " bands of rows, each dealt by the engine"), std::string::npos)
        << text;
    EXPECT_NE(text.find("    simulated GPU 1: "), std::string::npos) << text;
  }
}

TEST(MandelbrotRun, SimulatedGpusAloneGiveTheReference) {
  const Options o = small_image(pipeline::Backend::gpu, {1, 0});
  const Summary s = run(o);
  EXPECT_EQ(s.counts, compute_host(o.params, Precision::double_));
  EXPECT_EQ(s.comparison->differing, 0u);
  ASSERT_EQ(s.devices.size(), 2u);
  for (const auto& d : s.devices) EXPECT_TRUE(d.simulated) << d.name;
  EXPECT_EQ(bands_of(s), s.bands.size());
  EXPECT_NE(s.where.find("simulated GPU"), std::string::npos) << s.where;
}

}  // namespace
}  // namespace streampipe::tools::mandelbrot
