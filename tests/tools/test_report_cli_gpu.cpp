// SPDX-License-Identifier: Apache-2.0
// --report-json of gray, life and mandelbrot on the GPU: the device stages each tool has are
// filled from CUDA events for every query, the others stay empty.
#include "report_cli.hpp"
#include "support/gpu.hpp"

#include "streampipe/tools/life/universe.hpp"

namespace streampipe::testing {
namespace {

using ReportCliGpu = ReportCli;

TEST_F(ReportCliGpu, GrayHasH2dComputeAndD2hPerImage) {
  SP_REQUIRE_GPU();
  make_images(6, 301, 203);  // large enough that every copy takes measurable time
  // --backend gpu: every image on the GPU (the CPU's lanes would convert these six alone).
  ASSERT_EQ(run("gray in -o out --backend gpu -q --compression 1 --report --report-json r.json"), 0)
      << context();
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

TEST(LifeStepTiming, OnePairOfEventsPerGenerationWithoutChangingTheBoard) {
  SP_REQUIRE_GPU();
  using namespace streampipe::tools::life;
  const Device gpu(0);
  const Board start = random_board(131, 67, 0.3, 11);
  for (const Kernel kernel : {Kernel::global_memory, Kernel::shared_memory, Kernel::bit_packed}) {
    DeviceUniverse plain(gpu, 131, 67, kernel), timed(gpu, 131, 67, kernel);
    plain.upload(start);
    timed.upload(start);
    EXPECT_TRUE(timed.step_timings().empty());
    timed.time_steps(true);
    plain.step(7, true);
    timed.step(7, true);
    EXPECT_EQ(plain.populations(), timed.populations());
    const auto timings = timed.step_timings();
    ASSERT_EQ(timings.size(), 7u);
    for (std::size_t g = 0; g < timings.size(); ++g) {
      const auto& t = timings[g];
      EXPECT_GT(t.compute_ms, 0.0) << g;
      EXPECT_LE(t.enqueue_begin_ms, t.enqueue_end_ms) << g;
      // The GPU cannot finish a generation before the host began enqueueing it (the anchor
      // places GPU times on the host clock to within a few microseconds).
      EXPECT_GT(t.done_ms, t.enqueue_begin_ms - 0.05) << g;
      if (g > 0) {
        EXPECT_GE(t.done_ms, timings[g - 1].done_ms) << g;
      }
    }
    EXPECT_TRUE(timed.step_timings().empty());  // read once
    timed.time_steps(false);
    plain.step(3);
    timed.step(3);
    EXPECT_TRUE(timed.step_timings().empty());
    EXPECT_EQ(plain.download(), timed.download());
    EXPECT_EQ(timed.download(), advance_host(start, 10, 1));
  }
}

// The bands' descriptors go in (H2D), their counts come back (D2H).
TEST_F(ReportCliGpu, MandelbrotHasEveryDeviceStage) {
  SP_REQUIRE_GPU();
  ASSERT_EQ(run("mandelbrot --backend gpu --size 97x61 -i 300 --no-image --report-json r.json"), 0) << context();
  const auto j = json("r.json");
  expect_report_json(j, "mandelbrot", 1, "spin-wait", true, true, true);
  EXPECT_NE(j.at("device"), "host");
}

}  // namespace
}  // namespace streampipe::testing
