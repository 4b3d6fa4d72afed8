// SPDX-License-Identifier: Apache-2.0
#include "streampipe/tools/life/board.hpp"
#include "streampipe/io/allocation_error.hpp"
#include "streampipe/tools/life/random.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <numeric>
#include <stdexcept>
#include <system_error>
#include <thread>

namespace streampipe::tools::life {

void Board::check_size(std::uint32_t width, std::uint32_t height) {
  if (width == 0 || height == 0)
    throw std::invalid_argument(fmt::format("a board needs at least one cell, not {}x{}", width, height));
  // One byte per cell on the host; beyond 2^36 cells (64 GiB) something is wrong.
  if (std::uint64_t{width} * height > (std::uint64_t{1} << 36))
    throw std::invalid_argument(fmt::format("a {}x{} board is too large", width, height));
}

Board Board::empty(std::uint32_t width, std::uint32_t height) {
  check_size(width, height);
  Board b;
  b.width = width;
  b.height = height;
  try {
    b.cells.assign(b.size(), 0);
  } catch (const std::bad_alloc&) {
    throw io::AllocationError(b.size(), fmt::format("a {}x{} board (a byte per cell)", width, height));
  }
  return b;
}

std::uint64_t Board::population() const noexcept {
  return std::accumulate(cells.begin(), cells.end(), std::uint64_t{0});
}

Board random_board(std::uint32_t width, std::uint32_t height, double density, std::uint64_t seed) {
  const std::uint64_t threshold = density_threshold(density);
  Board b = Board::empty(width, height);
  for (std::size_t i = 0; i < b.cells.size(); ++i) b.cells[i] = random_cell(seed, i, threshold) ? 1 : 0;
  return b;
}

namespace {

void step_rows(const Board& in, Board& out, std::uint32_t y0, std::uint32_t y1) {
  const std::uint32_t w = in.width, h = in.height;
  for (std::uint32_t y = y0; y < y1; ++y) {
    const std::uint8_t* up = in.cells.data() + std::size_t{y == 0 ? h - 1 : y - 1} * w;
    const std::uint8_t* mid = in.cells.data() + std::size_t{y} * w;
    const std::uint8_t* down = in.cells.data() + std::size_t{y + 1 == h ? 0 : y + 1} * w;
    std::uint8_t* dst = out.cells.data() + std::size_t{y} * w;
    for (std::uint32_t x = 0; x < w; ++x) {
      const std::uint32_t l = x == 0 ? w - 1 : x - 1;
      const std::uint32_t r = x + 1 == w ? 0 : x + 1;
      const unsigned n = up[l] + up[x] + up[r] + mid[l] + mid[r] + down[l] + down[x] + down[r];
      dst[x] = (n == 3 || (n == 2 && mid[x] != 0)) ? 1 : 0;
    }
  }
}

}  // namespace

void step_host(const Board& in, Board& out, unsigned threads) {
  if (in.cells.size() != in.size() || in.size() == 0)
    throw std::invalid_argument("step_host: the input board is empty or inconsistent");
  if (out.width != in.width || out.height != in.height || out.cells.size() != in.size())
    out = Board::empty(in.width, in.height);
  if (threads == 0) threads = std::max(1u, std::thread::hardware_concurrency());
  // Small boards are not worth a thread.
  threads = static_cast<unsigned>(std::min<std::uint64_t>(threads, std::max<std::uint64_t>(1, in.size() >> 16)));
  threads = std::min(threads, in.height);
  if (threads <= 1) {
    step_rows(in, out, 0, in.height);
    return;
  }
  const auto first_row = [&](unsigned t) { return static_cast<std::uint32_t>(std::uint64_t{in.height} * t / threads); };
  std::vector<std::jthread> workers;
  workers.reserve(threads);
  unsigned started = 0;
  for (; started < threads; ++started) {
    const std::uint32_t y0 = first_row(started), y1 = first_row(started + 1);
    try {
      workers.emplace_back([&in, &out, y0, y1] { step_rows(in, out, y0, y1); });
    } catch (const std::system_error&) {
      break;  // no more threads (a process limit): this one steps the rows left
    }
  }
  if (started < threads) step_rows(in, out, first_row(started), in.height);
}

Board advance_host(Board board, std::uint64_t generations, unsigned threads) {
  Board next = Board::empty(board.width, board.height);
  for (std::uint64_t g = 0; g < generations; ++g) {
    step_host(board, next, threads);
    std::swap(board, next);
  }
  return board;
}

}  // namespace streampipe::tools::life
