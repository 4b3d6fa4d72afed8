// SPDX-License-Identifier: Apache-2.0
// tools::life::run on the host backend: the library call behind `streampipe life` steps
// every universe as advance_host does, streams every generation's populations in order,
// shows the boards it was asked to, times a query per generation, and stops when told.

#include "life_boards.hpp"
#include "universe_operation.hpp"
#include "universe_states.hpp"

#include "streampipe/pipeline/engine.hpp"
#include "streampipe/tools/life/report.hpp"
#include "streampipe/tools/life/random.hpp"
#include "streampipe/tools/life/run.hpp"

#include <gtest/gtest.h>

#include <algorithm>
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
  o.engine.backend = pipeline::Backend::host;
  return o;
}

TEST(LifeRun, StepsEveryUniverseAsTheHostReferenceDoes) {
  Options o = host_options();
  test_support::GenerationRows recorded;
  recorded.watch(o);
  const auto& rows = recorded.rows;
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
  o.engine.backend = pipeline::Backend::gpu;
  o.engine.simulate_gpus = true;
  o.engine.devices = {0, 1, 2};
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

// A GPU steps its share of the universes in one batch with the bit-packed kernel, else each
// on a lane of its own: the hardware queues asked for before the GPUs are counted follow.
TEST(LifeRun, LanesPerGpuAreOneBatchOrAUniverseEach) {
  Options o;
  o.universes = 40;
  EXPECT_EQ(lanes_per_gpu(o), 1);
  o.timed = true;
  EXPECT_EQ(lanes_per_gpu(o), 40);
  o.timed = false;
  o.kernel = Kernel::global_memory;
  o.universes = 500;
  EXPECT_EQ(lanes_per_gpu(o), 64);
  o.universes = 3;
  EXPECT_EQ(lanes_per_gpu(o), 3);
}

// An item of the engine's Life operation: the state in, the new state and the populations
// out, over the input (a universe stepped in place, two chunks running on); the host form
// steps the bit-packed words a GPU would (a universe may move between the CPU and a GPU from
// one chunk to the next) as it steps bytes.
TEST(LifeUniverseOperation, TheHostFormStepsWordsAndBytesInPlace) {
  for (const auto layout : {detail::StateLayout::words, detail::StateLayout::bytes}) {
    SCOPED_TRACE(layout == detail::StateLayout::words ? "words" : "bytes");
    // 70x9 bytes is not a whole number of words: the populations start past a padding.
    const detail::UniverseShape shape{.width = 70, .height = 9, .kernel = Kernel::bit_packed, .layout = layout};
    const std::vector<Board> start{random_board(70, 9, 0.4, 3), random_board(70, 9, 0.2, 4)};
    detail::UniverseStates states(2, shape, 16);
    for (std::size_t u = 0; u < 2; ++u) {
      const auto state = detail::to_state(start[u], shape);
      std::copy(state.begin(), state.end(), states.state(u).begin());
      EXPECT_EQ(detail::to_board(states.state(u), shape), start[u]);
    }
    pipeline::EngineOptions eo;
    eo.backend = pipeline::Backend::host;
    eo.batch_items = 2;  // both in one batch
    pipeline::Engine engine(detail::universe_operation(shape), eo);
    std::vector<Board> want = start;
    // No generation first: the states pass through, as on a GPU lane's first batch.
    for (const std::uint64_t generations : {0u, 11u, 5u}) {
      for (std::size_t u = 0; u < 2; ++u) {
        pipeline::Item item;
        item.in = states.input(u);
        item.out = states.output(u, generations);
        ASSERT_EQ(item.out.data(), item.in.data());
        (void)engine.submit(std::move(item));
      }
      EXPECT_EQ(engine.drain().failed, 0u);
      for (std::size_t u = 0; u < 2; ++u) {
        for (std::uint64_t g = 0; g < generations; ++g) {
          want[u] = advance_host(want[u], 1, 1);
          EXPECT_EQ(states.populations(u, generations)[g], want[u].population()) << u << " at " << g;
        }
        EXPECT_EQ(detail::to_board(states.state(u), shape), want[u]) << u;
      }
    }
  }
  // A state of another size, an output shorter than the state or with part of a population
  // after it, is refused.
  const detail::UniverseShape shape{.width = 8, .height = 8};
  EXPECT_THROW((void)detail::to_state(Board::empty(8, 9), shape), std::invalid_argument);
  pipeline::EngineOptions eo;
  eo.backend = pipeline::Backend::host;
  pipeline::Engine engine(detail::universe_operation(shape), eo);
  std::vector<std::uint64_t> state(8), out(10);
  for (const std::size_t out_bytes : {56u, 68u}) {
    pipeline::Item item;
    item.in = std::as_bytes(std::span(state));
    item.out = std::as_writable_bytes(std::span(out)).first(out_bytes);
    const pipeline::ItemResult r = engine.submit(std::move(item)).get();
    EXPECT_FALSE(r.ok()) << out_bytes;
    EXPECT_NE(r.error.find("a whole number of populations"), std::string::npos) << r.error;
  }
}

// The states' block: each universe's state, then its populations at a whole number of
// words, apart from the next universe's; as many generations as it was made for, no more.
TEST(LifeUniverseStates, EachUniverseHoldsItsStateAndAChunksPopulations) {
  const detail::UniverseShape bytes{.width = 13, .height = 3, .layout = detail::StateLayout::bytes};
  EXPECT_EQ(detail::state_bytes(bytes), 39u);
  EXPECT_EQ(detail::populations_offset(bytes), 40u);
  EXPECT_EQ(detail::output_bytes(bytes, 3), 64u);
  detail::UniverseStates states(3, bytes, 4);
  EXPECT_EQ(states.size(), 3u);
  EXPECT_EQ(states.input(0).size(), 39u);
  EXPECT_EQ(states.output(2, 4).size(), 72u);
  EXPECT_GE(states.input(1).data(), states.output(0, 4).data() + 72) << "universes overlap";
  EXPECT_EQ(reinterpret_cast<const std::byte*>(states.populations(1, 2).data()), states.input(1).data() + 40);
  EXPECT_THROW((void)states.output(0, 5), std::out_of_range);
  EXPECT_EQ(states.output(1, 0).size(), 40u);  // the state alone: it passes through
  EXPECT_TRUE(states.populations(1, 0).empty());
  EXPECT_GE(detail::UniverseStates::block_bytes(3, bytes, 4), 3u * 72u);
  EXPECT_FALSE(states.pinned());
  // The block a run of 64 GPU universes of 2048^2 holds: a bit a cell and a chunk's populations.
  Options o;
  o.width = o.height = 2048;
  pipeline::DeviceSet set;
  set.gpus = {0};
  EXPECT_EQ(state_memory(o, set, 64), 64u * (2048u * 2048u / 8u + 65536u * 8u));
  set.simulated = true;  // a byte a cell on simulated GPUs (host threads), as on the host
  EXPECT_EQ(state_memory(o, set, 64), 64u * (2048u * 2048u + 65536u * 8u));
  EXPECT_EQ(state_memory(o, pipeline::DeviceSet::resolve(pipeline::Backend::host, {}, false, true, true), 64),
            64u * (2048u * 2048u + 65536u * 8u));
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
