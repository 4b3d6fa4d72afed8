// SPDX-License-Identifier: Apache-2.0
// tools::life::run on the host backend: the library call behind `streampipe life` steps
// every universe as advance_host does, streams every generation's populations in order,
// shows the boards it was asked to, times a query per generation, and stops when told.
#include "universe_operation.hpp"

#include "streampipe/pipeline/engine.hpp"
#include "streampipe/tools/life/report.hpp"
#include "streampipe/tools/life/random.hpp"
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

// Simulated GPUs (host threads running the host form) take the universes the scheduler deals
// them; each steps as the reference does wherever it ran.
TEST(LifeRun, UniversesDealtToSimulatedDevices) {
  Options o = host_options();
  o.simulated = true;
  o.devices = {0, 1, 2};
  o.universes = 6;
  o.generations = 30;
  const Summary s = run(o);
  ASSERT_EQ(s.universes.size(), 6u);
  for (std::size_t u = 0; u < 6; ++u) {
    EXPECT_EQ(s.universes[u].populations.last(), advance_host(random_board(48, 32, 0.25, 7 + u), 30).population());
    EXPECT_GE(s.universes[u].runs_on, 0);
    EXPECT_LE(s.universes[u].runs_on, 2);
  }
  EXPECT_NE(s.where.find("3 simulated device(s)"), std::string::npos) << s.where;
}

// An item of the engine's Life operation: the state in, the populations and the new state
// out; the host form steps the bit-packed words a GPU would (a universe may move between
// the CPU and a GPU from one chunk to the next) as it steps bytes.
TEST(LifeUniverseOperation, TheHostFormStepsWordsAndBytesAlike) {
  for (const auto layout : {detail::StateLayout::words, detail::StateLayout::bytes}) {
    const detail::UniverseShape shape{.width = 70, .height = 9, .kernel = Kernel::bit_packed, .layout = layout};
    const Board start = random_board(70, 9, 0.4, 3), other = random_board(70, 9, 0.2, 4);
    std::vector<std::vector<std::uint64_t>> in{detail::to_state(start, shape), detail::to_state(other, shape)};
    EXPECT_EQ(detail::to_board(in[0], shape), start);
    constexpr std::uint64_t kGenerations = 11;
    const std::size_t out_bytes = detail::output_bytes(shape, kGenerations);
    std::vector<std::vector<std::uint64_t>> out(2, std::vector<std::uint64_t>((out_bytes + 7) / 8));
    pipeline::EngineOptions eo;
    eo.backend = pipeline::Backend::host;
    eo.batch_items = 2;  // both in one batch
    {
      pipeline::Engine engine(detail::universe_operation(shape), eo);
      for (std::size_t u = 0; u < 2; ++u) {
        pipeline::Item item;
        item.in = std::as_bytes(std::span(in[u])).first(detail::state_bytes(shape));
        item.out = std::as_writable_bytes(std::span(out[u])).first(out_bytes);
        (void)engine.submit(std::move(item));
      }
      const auto stats = engine.drain();
      EXPECT_EQ(stats.done, 2u);
    }
    for (std::size_t u = 0; u < 2; ++u) {
      Board want = u == 0 ? start : other;
      for (std::uint64_t g = 0; g < kGenerations; ++g) {
        want = advance_host(want, 1, 1);
        EXPECT_EQ(out[u][g], want.population()) << u << " at " << g;
      }
      EXPECT_EQ(detail::to_board(std::span(out[u]).subspan(kGenerations), shape), want) << u;
    }
  }
  // A state of another size, or an output without a population, is refused.
  const detail::UniverseShape shape{.width = 8, .height = 8};
  EXPECT_THROW((void)detail::to_state(Board::empty(8, 9), shape), std::invalid_argument);
  pipeline::EngineOptions eo;
  eo.backend = pipeline::Backend::host;
  pipeline::Engine engine(detail::universe_operation(shape), eo);
  std::vector<std::uint64_t> state(8), out(8);
  pipeline::Item item;
  item.in = std::as_bytes(std::span(state));
  item.out = std::as_writable_bytes(std::span(out));  // the state alone: no generation
  EXPECT_FALSE(engine.submit(std::move(item)).get().ok());
}

// The first states are filled by blocks of rows on several threads: the same state, and the
// same population, as random_board's, in either layout.
TEST(LifeUniverseOperation, RandomRowsMakeRandomBoardsState) {
  for (const auto layout : {detail::StateLayout::words, detail::StateLayout::bytes}) {
    const detail::UniverseShape shape{.width = 130, .height = 21, .kernel = Kernel::bit_packed, .layout = layout};
    const Board want = random_board(130, 21, 0.3, 9);
    std::vector<std::uint64_t> state((detail::state_bytes(shape) + 7) / 8, ~std::uint64_t{0});
    std::uint64_t live = 0;
    for (const auto& [y0, y1] : {std::pair{0u, 5u}, std::pair{5u, 6u}, std::pair{6u, 21u}})
      live += detail::fill_random_rows(state, shape, 9, density_threshold(0.3), y0, y1);
    EXPECT_EQ(live, want.population());
    EXPECT_EQ(detail::to_board(state, shape), want);
  }
}

}  // namespace
}  // namespace streampipe::tools::life
