// SPDX-License-Identifier: Apache-2.0
#pragma once
// Evicts the L2 cache before a timed GEMM by reading a buffer of twice its size, so the
// GEMM's operands come from HBM, as in the MLP where the other layers' weights pass through
// L2 in between. Reading leaves clean lines; a memset would leave dirty ones, whose
// write-back the timed kernel would pay for, which the MLP never does.

#include "streampipe/cuda/stream.hpp"

#include <cstddef>

namespace streampipe::serving::detail {
// Reads `bytes` (a multiple of 16) from `buffer` (16-byte aligned) on `stream`; `sink` (one
// device word) is written only by a never-taken branch that keeps the loads alive.
void evict_l2_by_reading(StreamRef stream, const std::byte* buffer, std::size_t bytes, unsigned* sink);
}  // namespace streampipe::serving::detail
