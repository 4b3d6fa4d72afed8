// SPDX-License-Identifier: Apache-2.0
#pragma once
// Pictures of a Life board: a gray image (live cells white on black, each cell `scale`
// pixels square) for PNG snapshots and animation frames, and a text view for terminals
// (two rows of cells per line with Unicode half blocks, cropped to the given size).

#include "streampipe/io/image.hpp"
#include "streampipe/tools/life/board.hpp"

#include <cstdint>
#include <string>

namespace streampipe::tools::life {

// Throws std::invalid_argument for scale 0 or an image beyond 2^31 pixels.
[[nodiscard]] io::Image render_image(const Board& board, unsigned scale = 1);
// The bytes of render_image's image of a width x height board (one per pixel); throws what
// render_image throws for that size, so that a run can refuse it before any work.
[[nodiscard]] std::uint64_t image_bytes(std::uint32_t width, std::uint32_t height, unsigned scale);

// At most `columns` cells wide and 2 x `lines` cells high, from the top-left corner.
[[nodiscard]] std::string render_text(const Board& board, unsigned columns, unsigned lines);

}  // namespace streampipe::tools::life
