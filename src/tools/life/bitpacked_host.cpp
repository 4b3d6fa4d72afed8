// SPDX-License-Identifier: Apache-2.0
#include "streampipe/tools/life/bitpacked.hpp"

#include <stdexcept>

namespace streampipe::tools::life::bitpacked {

std::vector<std::uint64_t> pack_host(const Board& board) {
  const std::uint32_t nw = words_per_row(board.width);
  std::vector<std::uint64_t> words(std::size_t{nw} * board.height, 0);
  for (std::uint32_t y = 0; y < board.height; ++y)
    for (std::uint32_t x = 0; x < board.width; ++x)
      if (board.at(x, y) != 0) words[std::size_t{y} * nw + x / 64] |= std::uint64_t{1} << (x % 64);
  return words;
}

Board unpack_host(const std::vector<std::uint64_t>& words, std::uint32_t width, std::uint32_t height) {
  const std::uint32_t nw = words_per_row(width);
  if (words.size() != std::size_t{nw} * height) throw std::invalid_argument("unpack_host: size mismatch");
  Board b = Board::empty(width, height);
  for (std::uint32_t y = 0; y < height; ++y)
    for (std::uint32_t x = 0; x < width; ++x)
      b.set(x, y, ((words[std::size_t{y} * nw + x / 64] >> (x % 64)) & 1u) != 0);
  return b;
}

void step_host(const std::vector<std::uint64_t>& in, std::vector<std::uint64_t>& out, std::uint32_t width,
               std::uint32_t height) {
  const std::uint32_t nw = words_per_row(width);
  if (width == 0 || height == 0 || in.size() != std::size_t{nw} * height)
    throw std::invalid_argument("bitpacked::step_host: size mismatch");
  out.resize(in.size());
  for (std::uint32_t k = 0; k < nw; ++k) {
    const WordEdges e = word_edges(k, nw, width);
    const auto sums = [&](std::uint32_t y) {
      const std::uint64_t* row = in.data() + std::size_t{y} * nw;
      return row_sums(row[k], row[e.kl], row[e.kr], e);
    };
    RowSums above = sums(height - 1), mid = sums(0);
    for (std::uint32_t y = 0; y < height; ++y) {
      const RowSums below = sums(y + 1 == height ? 0 : y + 1);
      out[std::size_t{y} * nw + k] = next_word(above, mid, below) & e.mask;
      above = mid;
      mid = below;
    }
  }
}

}  // namespace streampipe::tools::life::bitpacked
