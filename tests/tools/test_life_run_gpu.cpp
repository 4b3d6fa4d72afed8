// SPDX-License-Identifier: Apache-2.0
// tools::life::run on GPUs: universes dealt by the engine a chunk at a time (GPU 0 named
// several times stands for several devices on a one-GPU host), every kernel, batched, a lane
// each and timed, from pinned states (one GPU) and pageable ones (several), every universe
// stepping exactly as the CPU reference steps it alone.

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <vector>

#include "streampipe/cuda/device.hpp"
#include "streampipe/tools/life/board.hpp"
#include "streampipe/tools/life/run.hpp"
#include "life_boards.hpp"
#include "support/gpu.hpp"

namespace streampipe::tools::life {
namespace {

std::vector<int> all_gpus_or_zero_thrice() {
  const int n = Device::count();
  if (n > 1) {
    std::vector<int> gpus;
    for (int i = 0; i < n; ++i) gpus.push_back(i);
    return gpus;
  }
  return {0, 0, 0};
}

Options gpu_options(Kernel kernel, std::vector<int> devices) {
  Options o;
  o.width = 131;  // not a whole number of words
  o.height = 45;
  o.generations = 40;  // a first chunk of 16, then the rest: the states go back and forth
  o.universes = 7;
  o.seed = 40;
  o.kernel = kernel;
  o.engine.backend = pipeline::Backend::gpu;
  o.engine.devices = std::move(devices);
  return o;
}

void expect_reference(const Options& o, const Summary& s, const std::vector<std::vector<std::uint64_t>>& rows) {
  ASSERT_EQ(s.generations, o.generations);
  ASSERT_EQ(s.universes.size(), static_cast<std::size_t>(o.universes));
  ASSERT_EQ(rows.size(), o.generations + 1);
  for (std::size_t u = 0; u < s.universes.size(); ++u) {
    Board want = random_board(o.width, o.height, o.density, o.seed + u);
    for (std::uint64_t g = 0; g <= o.generations; ++g) {
      ASSERT_EQ(rows[g][u], want.population()) << "universe " << u << " generation " << g;
      want = advance_host(want, 1, 1);
    }
    EXPECT_EQ(s.universes[u].populations.last(), rows.back()[u]);
    EXPECT_GE(s.universes[u].runs_on, 0) << "universe " << u;
  }
}

TEST(LifeRunGpu, EveryKernelMatchesTheReferenceUniverseByUniverse) {
  SP_REQUIRE_GPU();
  for (const Kernel kernel : {Kernel::bit_packed, Kernel::shared_memory, Kernel::global_memory})
    for (const auto& devices : {std::vector<int>{0}, all_gpus_or_zero_thrice()}) {
      SCOPED_TRACE(fmt::format("{} on {} device(s)", to_string(kernel), devices.size()));
      Options o = gpu_options(kernel, devices);
      test_support::GenerationRows recorded;
      recorded.watch(o);
      const Summary s = run(o);
      EXPECT_EQ(s.layout, kernel == Kernel::bit_packed ? Layout::batched : Layout::stream_each);
      expect_reference(o, s, recorded.rows);
    }
}

TEST(LifeRunGpu, SnapshotsTimingAndAPattern) {
  SP_REQUIRE_GPU();
  Options o = gpu_options(Kernel::bit_packed, {0});
  o.universes = 3;
  o.generations = 12;
  o.snapshot_every = 5;  // generations 0, 5, 10
  o.timed = true;        // a generation of a universe per item
  std::vector<Board> seen;
  o.on_snapshot = [&](std::size_t u, std::uint64_t g, const Board& b) {
    EXPECT_EQ(b, advance_host(random_board(o.width, o.height, o.density, o.seed + u), g, 1)) << u << " at " << g;
    seen.push_back(b);
  };
  const Summary s = run(o);
  EXPECT_EQ(s.layout, Layout::stream_each);
  EXPECT_EQ(seen.size(), 3u * 3u);
  EXPECT_EQ(s.queries.size(), 3u * 12u);
  for (const auto& q : s.queries) {
    EXPECT_LE(q.submit_ms, q.complete_ms);
    EXPECT_TRUE(q.compute_ms.has_value());
  }

  Options p = gpu_options(Kernel::bit_packed, {0});
  p.universes = 1;
  p.generations = 4 * 9;  // a glider is back to its shape, 9 cells on
  p.density = 0;
  p.pattern = parse_rle("x = 3, y = 3\nbo$2bo$3o!");
  const Summary g = run(p);
  EXPECT_EQ(g.universes[0].populations.last(), 5u);
}

}  // namespace
}  // namespace streampipe::tools::life
