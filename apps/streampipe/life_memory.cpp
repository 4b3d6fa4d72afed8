// SPDX-License-Identifier: Apache-2.0
#include "life_memory.hpp"

#include "commands.hpp"
#include "memory_option.hpp"

#include "streampipe/host/host_info.hpp"
#include "streampipe/tools/life/board.hpp"
#include "streampipe/tools/life/image.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

namespace streampipe::cli {

void check_life_memory(const LifeFootprint& f, std::uint64_t max_memory_mib) {
  try {
    tools::life::Board::check_size(f.width, f.height);  // before what it would cost
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
  const std::uint64_t state = f.gpu && f.bit_packed ? product({(std::uint64_t{f.width} + 63) / 64 * 8, f.height})
                                                    : product({f.width, f.height});
  const std::uint64_t boards = std::min<std::uint64_t>(f.universes, host::usable_cores()) + (f.gpu ? 0 : 2);
  check_memory(product({2, f.universes, state}) + product({boards, f.width, f.height}) + product({2, frame}),
               max_memory_mib,
               fmt::format("{} universe(s) of {}x{} cells (each state twice, and {} board(s) at once{})", f.universes,
                           f.width, f.height, boards,
                           frame > 0 ? fmt::format(", and {}x-scaled frames", f.scale) : std::string()),
               "try a smaller --size, fewer --universes or a smaller --scale");
}

}  // namespace streampipe::cli
