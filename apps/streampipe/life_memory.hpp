// SPDX-License-Identifier: Apache-2.0
#pragma once
// What a life run holds on the host, checked before any of it is allocated (issue 36): the
// universes' states with room for a chunk's populations (tools::life::state_memory); the
// boards the first states are made from, one per core at once; the host's two boards for
// its steps; and a frame with its encoding. A size no board can have, a frame beyond 2^31
// pixels, and more than the run may take (memory_option.hpp) are bad usage (UsageError)
// naming the option.

#include "streampipe/tools/life/run.hpp"

#include <cstdint>
#include <string>

namespace streampipe::cli {

struct LifeFootprint {
  std::string size;             // --size as given, for messages
  std::uint64_t universes = 0;  // this process's
  unsigned scale = 1;           // of the frames
};

// `run` as complete_life_options made it (the board, the kernel, the frames), stepped on `set`
// (tools::life::device_set).
void check_life_memory(const tools::life::Options& run, const pipeline::DeviceSet& set, const LifeFootprint& f,
                       std::uint64_t max_memory_mib);

}  // namespace streampipe::cli
