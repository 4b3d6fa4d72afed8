// SPDX-License-Identifier: Apache-2.0
#include "life_memory.hpp"

#include "commands.hpp"
#include "memory_option.hpp"

#include "streampipe/tools/life/board.hpp"
#include "streampipe/tools/life/image.hpp"

#include <fmt/format.h>

#include <stdexcept>

namespace streampipe::cli {

void check_life_memory(const LifeFootprint& f, std::uint64_t max_memory_mib) {
  const bool on_host = !f.gpu || f.host_boards;
  try {
    if (on_host) tools::life::Board::check_size(f.width, f.height);  // before what it would cost
  } catch (const std::invalid_argument& e) {
    throw UsageError(fmt::format("--size {}: {}", f.size, e.what()));
  }
  std::uint64_t frame = 0;
  if (f.snapshot_every > 0) {
    try {
      frame = tools::life::image_bytes(f.width, f.height, f.scale);
    } catch (const std::invalid_argument& e) {
      throw UsageError(fmt::format("--scale {}: {}", f.scale, e.what()));
    }
  }
  const std::uint64_t boards = (on_host ? f.universes : 0) + (f.gpu ? 0 : 1);
  check_memory(product({boards, f.width, f.height}) + product({2, frame}), max_memory_mib,
               fmt::format("{} board(s) of {}x{} cells{}", boards, f.width, f.height,
                           frame > 0 ? fmt::format(" and {}x-scaled frames", f.scale) : std::string()),
               "try a smaller --size, fewer --universes or a smaller --scale");
}

}  // namespace streampipe::cli
