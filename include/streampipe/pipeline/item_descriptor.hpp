// SPDX-License-Identifier: Apache-2.0
#pragma once
// Where one item of a batch lives in the batch's input and output regions, in bytes. The
// engine uploads an array of these with each batch so that one kernel launch can cover all
// of its items (for example one block per item).

#include <cstdint>

namespace streampipe::pipeline {

struct ItemDescriptor {
  std::uint64_t in_offset = 0;
  std::uint64_t in_bytes = 0;
  std::uint64_t out_offset = 0;
  std::uint64_t out_bytes = 0;
};

}  // namespace streampipe::pipeline
