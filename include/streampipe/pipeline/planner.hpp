// SPDX-License-Identifier: Apache-2.0
#pragma once
// Chooses lanes, chunk size and batching from the measured link bandwidth and a short probe
// of the operation on the device, and says why:
//   copy-bound work (kernel time <= transfer time) needs few lanes and large chunks: enough
//   to keep both copy engines and the SMs busy at once;
//   compute-bound work needs more lanes so copies keep flowing while kernels run;
//   kernels that leave most of the GPU idle (one block per item) are batched, one launch
//   covering many items, with lanes enough to run several batches at once.
// Every choice is a plain EngineOptions / chunk size that the caller may override.

#include "streampipe/pipeline/engine.hpp"

#include <cstddef>
#include <span>
#include <string>

namespace streampipe::pipeline {

struct Plan {
  EngineOptions options;          // backend, lanes, depth, batch_items as chosen
  std::size_t chunk_records = 0;  // chunked runs: records per chunk
  double transfer_ms = 0;         // per chunk or batch, at the link's measured peak
  double kernel_ms = 0;           // per chunk or batch, probed
  double kernel_ms_one = 0;       // items: one item alone
  std::string reason;             // one line: what was measured and what follows from it
};

// One large array: probes the operation on a chunk of the real input.
[[nodiscard]] Plan plan_chunked(const Operation& op, std::span<const std::byte> in, std::size_t in_record,
                                std::size_t out_record, const EngineOptions& base = {});

// Independent items like `sample` (its input bytes; out_bytes of output each), `count` of them.
[[nodiscard]] Plan plan_items(const Operation& op, std::span<const std::byte> sample, std::size_t out_bytes,
                              std::size_t count, const EngineOptions& base = {});

}  // namespace streampipe::pipeline
