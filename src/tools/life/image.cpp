// SPDX-License-Identifier: Apache-2.0
#include "streampipe/tools/life/image.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <stdexcept>

namespace streampipe::tools::life {

std::uint64_t image_bytes(std::uint32_t width, std::uint32_t height, unsigned scale) {
  if (scale == 0) throw std::invalid_argument("the snapshot scale must be at least 1");
  const std::uint64_t w = std::uint64_t{width} * scale, h = std::uint64_t{height} * scale;
  if (w > (std::uint64_t{1} << 31) || h > (std::uint64_t{1} << 31) || w * h > (std::uint64_t{1} << 31))
    throw std::invalid_argument(fmt::format("a {}x{} board at scale {} makes a {}x{} image: too large (at most 2^31 "
                                            "pixels)",
                                            width, height, scale, w, h));
  return w * h;
}

io::Image render_image(const Board& board, unsigned scale) {
  (void)image_bytes(board.width, board.height, scale);
  const std::uint64_t w = std::uint64_t{board.width} * scale, h = std::uint64_t{board.height} * scale;
  io::Image img = io::Image::make(static_cast<std::uint32_t>(w), static_cast<std::uint32_t>(h), 1);
  for (std::uint32_t y = 0; y < board.height; ++y) {
    std::uint8_t* row = img.pixels.data() + std::size_t{y} * scale * w;
    for (std::uint32_t x = 0; x < board.width; ++x)
      if (board.at(x, y) != 0) std::memset(row + std::size_t{x} * scale, 255, scale);
    for (unsigned r = 1; r < scale; ++r) std::memcpy(row + r * w, row, w);
  }
  return img;
}

std::string render_text(const Board& board, unsigned columns, unsigned lines) {
  const std::uint32_t cols = std::min<std::uint32_t>(board.width, columns);
  const std::uint32_t rows = std::min<std::uint32_t>(board.height, 2 * lines);
  std::string out;
  out.reserve(std::size_t{cols} * (rows / 2 + 1) * 3);
  for (std::uint32_t y = 0; y < rows; y += 2) {
    for (std::uint32_t x = 0; x < cols; ++x) {
      const bool top = board.at(x, y) != 0, bottom = y + 1 < rows && board.at(x, y + 1) != 0;
      out += top ? (bottom ? "\u2588" : "\u2580") : (bottom ? "\u2584" : " ");
    }
    out += '\n';
  }
  return out;
}

}  // namespace streampipe::tools::life
