// SPDX-License-Identifier: Apache-2.0
#include "streampipe/pipeline/timeline.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace streampipe::pipeline {
namespace {

void fill(Timeline& t) {
  // Two lanes: H2D back to back (the copy engine is the bottleneck), compute overlapping.
  t.add({Stage::h2d, 0, 0, 1, 10.0, 12.0, 2000});
  t.add({Stage::h2d, 1, 1, 1, 12.0, 14.0, 2000});
  t.add({Stage::compute, 0, 0, 1, 12.0, 13.0, 0});
  t.add({Stage::compute, 1, 1, 1, 14.0, 15.0, 0});
  t.add({Stage::d2h, 0, 0, 1, 13.0, 13.5, 1000});
  t.add({Stage::d2h, 1, 1, 1, 15.0, 15.5, 1000});
}

TEST(Timeline, ReportFindsBottleneckAndOverlap) {
  Timeline t;
  fill(t);
  const auto rep = t.report();
  EXPECT_DOUBLE_EQ(rep.wall_ms, 5.5);
  EXPECT_EQ(rep.items, 2u);
  EXPECT_EQ(rep.bytes_in, 4000u);
  EXPECT_EQ(rep.bytes_out, 2000u);
  EXPECT_EQ(rep.bottleneck, Stage::h2d);
  EXPECT_NEAR(rep.overlap_efficiency, 4.0 / 5.5, 1e-12);
  EXPECT_NEAR(rep.h2d_gbps, 4000 / 5.5e6, 1e-15);
  const nlohmann::json j = rep;
  EXPECT_EQ(j["bottleneck"], "H2D");
  EXPECT_EQ(j["stages"].size(), 3u);
}

TEST(Timeline, ChromeTraceHasOneEventPerRecordAndNamedRows) {
  Timeline t;
  fill(t);
  const auto trace = t.chrome_trace("test");
  int complete = 0, names = 0;
  for (const auto& e : trace["traceEvents"]) {
    if (e["ph"] == "X") {
      ++complete;
      EXPECT_GE(e["ts"].get<double>(), 0.0);
      EXPECT_GE(e["dur"].get<double>(), 0.0);
    }
    if (e["ph"] == "M" && e["name"] == "thread_name") ++names;
  }
  EXPECT_EQ(complete, 6);
  EXPECT_EQ(names, 4);  // copy H2D, copy D2H, lane 0 compute, lane 1 compute
}

TEST(Timeline, GanttSvgIsWellFormed) {
  Timeline t;
  fill(t);
  const auto svg = t.gantt_svg("title");
  EXPECT_EQ(svg.rfind("<svg", 0), 0u);
  EXPECT_NE(svg.find("</svg>"), std::string::npos);
  EXPECT_NE(svg.find("copy H2D"), std::string::npos);
  EXPECT_NE(svg.find("lane 1 compute"), std::string::npos);
  std::size_t rects = 0;
  for (std::size_t p = svg.find("<rect"); p != std::string::npos; p = svg.find("<rect", p + 1)) ++rects;
  EXPECT_EQ(rects, 1u + 6u + 5u);  // background, records, legend
  EXPECT_TRUE(Timeline().gantt_svg("empty").find("</svg>") != std::string::npos);
}

}  // namespace
}  // namespace streampipe::pipeline
