// SPDX-License-Identifier: Apache-2.0
#pragma once
// What a life run holds on the host, checked before any of it is allocated (issue 36): each
// universe's state twice (its state and the output of the chunk it is in the engine for),
// a bit per cell with the bit-packed kernel on GPUs and a byte per cell otherwise; the
// boards the first states are made from, one per core at once; the host's two boards for
// its steps; and a frame with its encoding. A size no board can have, a frame beyond 2^31
// pixels, and more than the run may take (memory_option.hpp) are bad usage (UsageError)
// naming the option.

#include <cstdint>
#include <string>

namespace streampipe::cli {

struct LifeFootprint {
  std::string size;  // --size as given, for messages
  std::uint32_t width = 0, height = 0;
  std::uint64_t universes = 0;  // this process's
  bool gpu = false;
  bool bit_packed = true;       // the kernel on GPUs
  std::uint64_t snapshot_every = 0;
  unsigned scale = 1;
};

void check_life_memory(const LifeFootprint& f, std::uint64_t max_memory_mib);

}  // namespace streampipe::cli
