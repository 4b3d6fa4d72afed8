// SPDX-License-Identifier: Apache-2.0
#pragma once
// Conway's Game of Life (rule B3/S23) on a toroidal board: the host side.
//
// A Board holds width x height cells, one byte each (0 dead, 1 alive), row-major. Edges
// wrap: the left neighbour of column 0 is column width-1, the row above row 0 is row
// height-1 (also on boards narrower than 3 cells, where a cell can be its own neighbour).
// step_host is the CPU reference every kernel is checked against, exactly.

#include <cstddef>
#include <cstdint>
#include <vector>

namespace streampipe::tools::life {

struct Board {
  std::uint32_t width = 0;
  std::uint32_t height = 0;
  std::vector<std::uint8_t> cells;  // height rows of width bytes, each 0 or 1

  // All dead. Throws std::invalid_argument for an empty or absurdly large size,
  // io::AllocationError (a std::bad_alloc naming the size) when memory runs out.
  [[nodiscard]] static Board empty(std::uint32_t width, std::uint32_t height);
  // The size check of empty(), alone: throws std::invalid_argument as it does.
  static void check_size(std::uint32_t width, std::uint32_t height);

  [[nodiscard]] std::uint8_t at(std::uint32_t x, std::uint32_t y) const noexcept {
    return cells[std::size_t{y} * width + x];
  }
  void set(std::uint32_t x, std::uint32_t y, bool alive) noexcept {
    cells[std::size_t{y} * width + x] = alive ? 1 : 0;
  }
  [[nodiscard]] std::size_t size() const noexcept { return std::size_t{width} * height; }
  [[nodiscard]] std::uint64_t population() const noexcept;

  friend bool operator==(const Board&, const Board&) = default;
};

// Each cell alive with probability `density`, decided by random_cell (life_random.hpp) so
// that the GPU fills the same board without a copy. Throws for density outside [0, 1].
[[nodiscard]] Board random_board(std::uint32_t width, std::uint32_t height, double density,
                                 std::uint64_t seed);

// One generation: out = next(in). `out` is resized to match. threads == 0 uses the
// hardware concurrency; rows are split between threads. The result does not depend on it.
void step_host(const Board& in, Board& out, unsigned threads = 1);

// `generations` steps; returns the final board.
[[nodiscard]] Board advance_host(Board board, std::uint64_t generations, unsigned threads = 0);

}  // namespace streampipe::tools::life
