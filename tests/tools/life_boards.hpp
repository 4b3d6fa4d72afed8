// SPDX-License-Identifier: Apache-2.0
#pragma once
// Life boards for tests, written as the list of their live cells; and every generation's
// populations a run reports, recorded.

#include "streampipe/tools/life/board.hpp"
#include "streampipe/tools/life/run.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <span>
#include <utility>
#include <vector>

namespace streampipe::tools::life::test_support {

inline Board board_from(std::uint32_t w, std::uint32_t h, const std::vector<std::pair<std::uint32_t, std::uint32_t>>& live) {
  Board b = Board::empty(w, h);
  for (auto [x, y] : live) b.set(x, y, true);
  return b;
}

// Asks `o` for every generation's populations and keeps them, a row per generation (the
// first states' included), checking that they come in order. Must outlive the run.
struct GenerationRows {
  std::vector<std::vector<std::uint64_t>> rows;
  void watch(Options& o) {
    o.every_population = true;
    o.on_generation = [this](std::uint64_t g, std::span<const std::uint64_t> row) {
      EXPECT_EQ(g, rows.size());
      rows.emplace_back(row.begin(), row.end());
    };
  }
};

}  // namespace streampipe::tools::life::test_support
