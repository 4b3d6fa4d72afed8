// --report-json of gray, life and mandelbrot on the GPU: the device stages each tool has are
// filled from CUDA events for every query, the others stay empty.
#include "report_cli.hpp"
#include "support/gpu.hpp"

namespace streampipe::testing {
namespace {

using ReportCliGpu = ReportCli;

TEST_F(ReportCliGpu, GrayHasH2dComputeAndD2hPerImage) {
  SP_REQUIRE_GPU();
  make_images(6, 301, 203);  // large enough that every copy takes measurable time
  ASSERT_EQ(run("gray in -o out --backend gpu -q --compression 1 --report --report-json r.json"), 0) << context();
  EXPECT_NE(stdout_.find("sync: spin-wait"), std::string::npos) << context();
  const auto j = json("r.json");
  expect_report_json(j, "gray", 6, "spin-wait", true, true, true);
  EXPECT_NE(j.at("device"), "host");
  EXPECT_GT(j.at("summary").at("total_gpu_compute_ms").get<double>(), 0.0);
}

TEST_F(ReportCliGpu, LifeHasComputePerGenerationAndNoCopies) {
  SP_REQUIRE_GPU();
  for (const char* kernel : {"global", "shared", "bitpacked"}) {
    ASSERT_EQ(run(std::string("life --backend gpu -k ") + kernel +
                  " --size 67x45 -g 9 -u 2 --population p.csv --force --report --report-json r.json"),
              0)
        << context();
    expect_report_json(json("r.json"), "life", 18, "spin-wait", false, true, false);
  }
}

TEST_F(ReportCliGpu, LifeReportKeepsThePopulationsOfAnUntimedRun) {
  SP_REQUIRE_GPU();
  ASSERT_EQ(run("life --backend gpu --size 100x77 -g 30 -u 2 --seed 5 --population plain.csv"), 0) << context();
  ASSERT_EQ(run("life --backend gpu --size 100x77 -g 30 -u 2 --seed 5 --population timed.csv --report"), 0)
      << context();
  EXPECT_EQ(read("plain.csv"), read("timed.csv"));
  EXPECT_FALSE(read("plain.csv").empty());
}

TEST_F(ReportCliGpu, MandelbrotHasComputeAndD2h) {
  SP_REQUIRE_GPU();
  ASSERT_EQ(run("mandelbrot --backend gpu --size 97x61 -i 300 -o '' --report-json r.json"), 0) << context();
  const auto j = json("r.json");
  expect_report_json(j, "mandelbrot", 1, "spin-wait", false, true, true);
  EXPECT_NE(j.at("device"), "host");
}

}  // namespace
}  // namespace streampipe::testing
