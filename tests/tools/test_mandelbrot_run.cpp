// SPDX-License-Identifier: Apache-2.0
// tools::mandelbrot::run on the host backend: the whole image, or bands of simulated
// devices, equal to the host reference, checked against it, and one query for the image.
#include "streampipe/tools/mandelbrot/report.hpp"
#include "streampipe/tools/mandelbrot/run.hpp"

#include <gtest/gtest.h>

namespace streampipe::tools::mandelbrot {
namespace {

Options small_image() {
  Options o;
  o.params.width = 64;
  o.params.height = 40;
  o.params.max_iterations = 200;
  o.params.region = Region::centered(-0.75, 0.0, 3.5, 64, 40);
  return o;
}

TEST(MandelbrotRun, TheHostImageIsItsOwnReference) {
  const Options o = small_image();
  const Summary s = run(o);
  EXPECT_EQ(s.counts, compute_host(o.params, Precision::double_));
  ASSERT_TRUE(s.comparison.has_value());
  EXPECT_EQ(s.comparison->differing, 0u);
  EXPECT_FALSE(s.double_differs(o));
  EXPECT_TRUE(s.bands.empty());
  EXPECT_EQ(latency_run(o, s).queries.size(), 1u);
  EXPECT_EQ(report_json(o, s).at("iterations_total"), s.total_iterations);
}

TEST(MandelbrotRun, SimulatedDevicesComputeABandEach) {
  Options o = small_image();
  o.devices = {0, 1, 2};
  o.simulated = true;
  const Summary s = run(o);
  EXPECT_EQ(s.counts, compute_host(o.params, Precision::double_));
  EXPECT_EQ(s.bands.size(), 3u);
  EXPECT_EQ(s.comparison->differing, 0u);
  EXPECT_NE(report_text(o, s).find("3 bands of rows, one per simulated device"), std::string::npos);
}

}  // namespace
}  // namespace streampipe::tools::mandelbrot
