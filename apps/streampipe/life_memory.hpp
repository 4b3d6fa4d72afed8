// SPDX-License-Identifier: Apache-2.0
#pragma once
// What a life run holds on the host, checked before any of it is allocated (issue 36): a
// byte per cell for each universe's board where the host steps or sees it (the host
// backend, a pattern, frames, --live), a scratch board for the host's step, and a frame
// with its encoding. A size no board can have, a frame beyond 2^31 pixels, and more than the
// run may take (memory_option.hpp) are bad usage (UsageError) naming the option.

#include <cstdint>
#include <string>

namespace streampipe::cli {

struct LifeFootprint {
  std::string size;  // --size as given, for messages
  std::uint32_t width = 0, height = 0;
  std::uint64_t universes = 0;  // this process's
  bool gpu = false;
  bool host_boards = false;     // the host keeps each universe's board (pattern, frames, --live)
  std::uint64_t snapshot_every = 0;
  unsigned scale = 1;
};

void check_life_memory(const LifeFootprint& f, std::uint64_t max_memory_mib);

}  // namespace streampipe::cli
