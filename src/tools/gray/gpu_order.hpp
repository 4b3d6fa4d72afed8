// SPDX-License-Identifier: Apache-2.0
#pragma once
// The order a run with GPU decoding converts its files in: those nvJPEG will not decode
// (PNG, progressive JPEG, ...: gpu_may_decode on their first bytes) first, so that the CPU
// converts them while the GPUs start; then those it may, which the run groups for the JPEG
// engines. Within each kind, job order. A file that cannot be read counts as the first kind:
// its read fails later, where every failure is reported.

#include "streampipe/tools/gray/plan.hpp"

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace streampipe::tools::gray::detail {

struct GpuOrder {
  std::vector<std::size_t> order;  // job indices, in the order to convert them
  std::size_t gpu_from = 0;        // order[gpu_from..] are the files nvJPEG may decode
  // The largest width and height of a baseline JPEG among them (each of any file), for the
  // JPEG engines' buffers; 0 when there is none.
  std::uint32_t largest_width = 0, largest_height = 0;
};

// Reads the first bytes of each job's input on up to `threads` threads.
[[nodiscard]] GpuOrder order_for_gpu_decoding(std::span<const Job> jobs, unsigned threads);

}  // namespace streampipe::tools::gray::detail
