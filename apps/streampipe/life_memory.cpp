// SPDX-License-Identifier: Apache-2.0
#include "life_memory.hpp"

#include "commands.hpp"
#include "memory_option.hpp"

#include "streampipe/host/host_info.hpp"
#include "streampipe/tools/life/board.hpp"
#include "streampipe/tools/life/image.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <stdexcept>

namespace streampipe::cli {

void check_life_memory(const tools::life::Options& run, const pipeline::DeviceSet& set, const LifeFootprint& f,
                       std::uint64_t max_memory_mib) {
  try {
    tools::life::Board::check_size(run.width, run.height);  // before what it would cost
  } catch (const std::invalid_argument& e) {
    throw UsageError(fmt::format("--size {}: {}", f.size, e.what()));
  }
  std::uint64_t frame = 0;
  if (run.snapshot_every > 0) {
    try {
      frame = tools::life::image_bytes(run.width, run.height, f.scale);
    } catch (const std::invalid_argument& e) {
      throw UsageError(fmt::format("--scale {}: {}", f.scale, e.what()));
    }
  }
  const std::uint64_t boards = std::min<std::uint64_t>(f.universes, host::usable_cores()) + (set.on_gpus() ? 0 : 2);
  std::uint64_t held = tools::life::state_memory(run, set, static_cast<std::size_t>(f.universes));
  for (const std::uint64_t more : {product({boards, run.width, run.height}), product({2, frame})})
    held = more > std::numeric_limits<std::uint64_t>::max() - held ? std::numeric_limits<std::uint64_t>::max()
                                                                  : held + more;
  check_memory(held, max_memory_mib,
               fmt::format("{} universe(s) of {}x{} cells (their states, and {} board(s) at once{})", f.universes,
                           run.width, run.height, boards,
                           frame > 0 ? fmt::format(", and {}x-scaled frames", f.scale) : std::string()),
               "try a smaller --size, fewer --universes or a smaller --scale");
}

}  // namespace streampipe::cli
