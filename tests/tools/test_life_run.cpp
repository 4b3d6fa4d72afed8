// SPDX-License-Identifier: Apache-2.0
// tools::life::run on the host backend: the library call behind `streampipe life` steps
// every universe as advance_host does, streams every generation's populations in order,
// shows the boards it was asked to, times a query per generation, and stops when told.
#include "streampipe/tools/life/report.hpp"
#include "streampipe/tools/life/run.hpp"

#include <gtest/gtest.h>

#include <stop_token>
#include <vector>

namespace streampipe::tools::life {
namespace {

Options host_options() {
  Options o;
  o.width = 48;
  o.height = 32;
  o.generations = 12;
  o.universes = 3;
  o.seed = 7;
  return o;
}

TEST(LifeRun, StepsEveryUniverseAsTheHostReferenceDoes) {
  Options o = host_options();
  std::vector<std::vector<std::uint64_t>> rows;
  o.every_population = true;
  o.on_generation = [&](std::uint64_t g, std::span<const std::uint64_t> row) {
    EXPECT_EQ(g, rows.size());
    rows.emplace_back(row.begin(), row.end());
  };
  const Summary s = run(o);
  EXPECT_EQ(s.generations, 12u);
  EXPECT_FALSE(s.interrupted);
  ASSERT_EQ(s.universes.size(), 3u);
  ASSERT_EQ(rows.size(), 13u);  // generation 0 and each step
  for (std::size_t u = 0; u < 3; ++u) {
    const Board start = random_board(48, 32, 0.25, 7 + u);
    EXPECT_EQ(s.universes[u].populations.first(), start.population());
    EXPECT_EQ(s.universes[u].populations.last(), advance_host(start, 12).population());
    EXPECT_EQ(rows.back()[u], s.universes[u].populations.last());
  }
  EXPECT_EQ(report_json(o, s).at("final_populations").size(), 3u);
}

TEST(LifeRun, ShowsSnapshotsAndTimesEveryGeneration) {
  Options o = host_options();
  o.snapshot_every = 4;
  o.timed = true;
  std::vector<std::pair<std::size_t, std::uint64_t>> frames;
  o.on_snapshot = [&](std::size_t u, std::uint64_t g, const Board& b) {
    EXPECT_EQ(b.width, 48u);
    frames.emplace_back(u, g);
  };
  const Summary s = run(o);
  EXPECT_EQ(frames.size(), 3u * 4u);  // generations 0, 4, 8, 12 of each universe
  EXPECT_EQ(s.queries.size(), 3u * 12u);
  for (const auto& q : s.queries) EXPECT_LE(q.submit_ms, q.complete_ms);
  EXPECT_EQ(latency_run(o, s).queries.size(), s.queries.size());
}

TEST(LifeRun, AStopEndsTheRunBetweenGenerations) {
  Options o = host_options();
  std::stop_source stop;
  o.stop = stop.get_token();
  o.every_population = true;
  o.on_generation = [&](std::uint64_t g, std::span<const std::uint64_t>) {
    if (g == 5) stop.request_stop();
  };
  const Summary s = run(o);
  EXPECT_TRUE(s.interrupted);
  EXPECT_EQ(s.generations, 5u);
}

}  // namespace
}  // namespace streampipe::tools::life
