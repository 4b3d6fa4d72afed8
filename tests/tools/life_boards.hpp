// SPDX-License-Identifier: Apache-2.0
#pragma once
// Life boards for tests, written as the list of their live cells.

#include "streampipe/tools/life/board.hpp"

#include <cstdint>
#include <utility>
#include <vector>

namespace streampipe::tools::life::test_support {

inline Board board_from(std::uint32_t w, std::uint32_t h, const std::vector<std::pair<std::uint32_t, std::uint32_t>>& live) {
  Board b = Board::empty(w, h);
  for (auto [x, y] : live) b.set(x, y, true);
  return b;
}

}  // namespace streampipe::tools::life::test_support
