// SPDX-License-Identifier: Apache-2.0
#include "streampipe/ops/rgb_to_gray.hpp"
#include "streampipe/pipeline/chunked.hpp"
#include "streampipe/pipeline/planner.hpp"

#include <gtest/gtest.h>

#include <random>

namespace streampipe::pipeline {
namespace {

Operation gray_host() {
  Operation op;
  op.name = "rgb to gray";
  op.output_bytes = [](std::size_t in) { return in / 3; };
  op.host = [](const Batch& b) {
    for (std::size_t k = 0; k < b.size(); ++k) {
      const auto& d = b.items()[k];
      ops::rgb_to_gray_host({b.in_as<const std::uint8_t>(k), d.in_bytes}, {b.out_as<std::uint8_t>(k), d.out_bytes});
    }
  };
  return op;
}

EngineOptions host(int lanes) {
  EngineOptions o;
  o.backend = Backend::host;
  o.lanes = lanes;
  return o;
}

TEST(ChunkedHost, ConvertsOneLargeImageInChunks) {
  std::mt19937 rng(1);
  const std::size_t pixels = 1000 * 777 + 5;
  std::vector<std::uint8_t> rgb(3 * pixels), gray(pixels, 0xAB), want(pixels);
  for (auto& b : rgb) b = static_cast<std::uint8_t>(rng());
  ops::rgb_to_gray_host(rgb, want);
  for (int lanes : {1, 3}) {
    Engine engine(gray_host(), host(lanes));
    const auto run = run_chunked(engine, std::span<const std::uint8_t>(rgb), std::span<std::uint8_t>(gray),
                                 3 * 65536, 3, 1);
    EXPECT_TRUE(run.ok());
    EXPECT_EQ(run.chunks, (pixels + 65535) / 65536);
    EXPECT_EQ(run.stats.done, run.chunks);
    EXPECT_EQ(gray, want);
  }
}

TEST(ChunkedHost, MismatchedSpansAreClearErrors) {
  Engine engine(gray_host(), host(2));
  std::vector<std::uint8_t> rgb(30), gray(9), empty;
  try {
    (void)run_chunked(engine, std::as_bytes(std::span(rgb)), 3, std::as_writable_bytes(std::span(gray)), 1, 4);
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("10 input records need an output of 10 bytes"), std::string::npos) << e.what();
  }
  std::vector<std::uint8_t> ten(10);
  EXPECT_THROW((void)run_chunked(engine, std::as_bytes(std::span(ten)), 3, std::as_writable_bytes(std::span(gray)), 1, 4),
               std::invalid_argument);
  EXPECT_THROW((void)run_chunked(engine, std::as_bytes(std::span(empty)), 3, std::as_writable_bytes(std::span(gray)), 1, 4),
               std::invalid_argument);
  std::vector<std::uint8_t> g10(10);
  EXPECT_THROW((void)run_chunked(engine, std::as_bytes(std::span(rgb)), 3, std::as_writable_bytes(std::span(g10)), 1, 0),
               std::invalid_argument);
}

TEST(PlannerHost, ChoosesLanesAndChunksForTheHostBackend) {
  std::vector<std::uint8_t> rgb(3 * 5'000'000, 7), gray(5'000'000);
  const auto plan = plan_chunked(gray_host(), std::as_bytes(std::span(rgb)), 3, 1, host(1));
  EXPECT_EQ(plan.options.backend, Backend::host);
  EXPECT_GE(plan.options.lanes, 1);
  EXPECT_GT(plan.chunk_records, 0u);
  EXPECT_NE(plan.reason.find("host backend"), std::string::npos);
  Engine engine(gray_host(), plan.options);
  EXPECT_TRUE(run_chunked(engine, std::span<const std::uint8_t>(rgb), std::span<std::uint8_t>(gray), 3 * plan.chunk_records, 3, 1).ok());
  EXPECT_EQ(gray[4'999'999], ops::luma_bt601(7, 7, 7));
  EXPECT_THROW((void)plan_items(gray_host(), {}, 0, 1, host(1)), std::invalid_argument);
}

}  // namespace
}  // namespace streampipe::pipeline
