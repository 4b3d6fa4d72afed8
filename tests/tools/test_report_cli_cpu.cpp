// SPDX-License-Identifier: Apache-2.0
// --report and --report-json of gray, life and mandelbrot on the host backend.
#include "report_cli.hpp"

namespace streampipe::testing {
namespace {

using ReportCliHost = ReportCli;

void expect_printed_report(const std::string& out, const std::string& context) {
  for (const char* text : {"=== ", "sync: blocking-sync", "throughput:", "  latency   min ", "  enqueue   min ",
                           "  H2D       not measured", "  compute   not measured", "  D2H       not measured",
                           "total host wall time"})
    EXPECT_NE(out.find(text), std::string::npos) << "'" << text << "' missing\n" << context;
}

TEST_F(ReportCliHost, GrayOneQueryPerConvertedImage) {
  make_images(5);
  ASSERT_EQ(run("gray in -o out --backend host -q --compression 1 --report --report-json r.json"), 0) << context();
  expect_printed_report(stdout_, context());
  EXPECT_NE(stdout_.find("iteration limit 5"), std::string::npos) << context();
  const auto j = json("r.json");
  expect_report_json(j, "gray", 5, "blocking-sync", false, false, false);
  EXPECT_EQ(j.at("device"), "host");
  EXPECT_EQ(j.at("limits").at("iteration_limit").get<std::size_t>(), 5u);
}

TEST_F(ReportCliHost, GrayFailedFileIsNoQuery) {
  make_images(3);
  std::ofstream(dir_ / "in" / "broken.png") << "not a png";
  ASSERT_EQ(run("gray in -o out --backend host -q --report-json r.json"), 1) << context();
  const auto j = json("r.json");
  expect_report_json(j, "gray", 3, "blocking-sync", false, false, false);
  EXPECT_EQ(j.at("limits").at("iteration_limit").get<std::size_t>(), 4u);
}

TEST_F(ReportCliHost, LifeOneQueryPerGenerationAndUniverse) {
  ASSERT_EQ(run("life --backend host --size 37x21 -g 6 -u 3 --report --report-json r.json"), 0) << context();
  expect_printed_report(stdout_, context());
  const auto j = json("r.json");
  expect_report_json(j, "life", 18, "blocking-sync", false, false, false);
  EXPECT_EQ(j.at("limits").at("iteration_limit").get<std::size_t>(), 18u);
}

TEST_F(ReportCliHost, MandelbrotOneQueryPerImage) {
  ASSERT_EQ(run("mandelbrot --backend host --size 41x23 -i 64 --no-image --report --report-json r.json"), 0) << context();
  expect_printed_report(stdout_, context());
  expect_report_json(json("r.json"), "mandelbrot", 1, "blocking-sync", false, false, false);
}

TEST_F(ReportCliHost, ExistingReportJsonIsRefusedBeforeAnyWork) {
  std::ofstream(dir_ / "r.json") << "keep";
  EXPECT_EQ(run("life --backend host --size 8x8 -g 2 --report-json r.json"), 2) << context();
  EXPECT_NE(stderr_.find("r.json"), std::string::npos) << context();
  EXPECT_EQ(read("r.json"), "keep");
  EXPECT_EQ(run("mandelbrot --backend host --size 8x8 --no-image --report-json r.json"), 2) << context();
  make_images(1);
  EXPECT_EQ(run("gray in -o out --backend host -q --report-json r.json"), 2) << context();
  EXPECT_FALSE(std::filesystem::exists(dir_ / "out"));
  EXPECT_EQ(read("r.json"), "keep");
  ASSERT_EQ(run("life --backend host --size 8x8 -g 2 --report-json r.json --force"), 0) << context();
  expect_report_json(json("r.json"), "life", 2, "blocking-sync", false, false, false);
}

TEST_F(ReportCliHost, HelpExplainsTheQuery) {
  ASSERT_EQ(run("life --help"), 0);
  EXPECT_NE(stdout_.find("--report-json"), std::string::npos);
  EXPECT_NE(stdout_.find("one generation of one universe"), std::string::npos);
  ASSERT_EQ(run("gray --help"), 0);
  EXPECT_NE(stdout_.find("one image"), std::string::npos);
  ASSERT_EQ(run("mandelbrot --help"), 0);
  EXPECT_NE(stdout_.find("the whole image"), std::string::npos);
}

}  // namespace
}  // namespace streampipe::testing
