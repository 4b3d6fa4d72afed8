// SPDX-License-Identifier: Apache-2.0
#pragma once
// Whether an engine with the CPU in its set starts its GPUs: a GPU's start (its context,
// pools and the operation's set-up) takes a while and competes with the CPU's lanes for
// the host, so for a run of known length it is worth it only when the CPU alone would be
// busy for longer than the start takes. Judged once the CPU's lanes have a measured speed.
// Pure.

#include <cstddef>

namespace streampipe::pipeline::detail {

enum class GpuStart { now, wait, skip };

struct GpuStartFacts {
  std::size_t expected_items = 0;  // 0: the run's length is not known
  std::size_t items_taken = 0;     // items handed to a slot so far
  bool cpu_in_set = false;
  double cpu_latency_ms = 0;       // the CPU's measured time per batch; 0: not measured yet
  int cpu_slots = 1;               // batches the CPU runs at once
  double items_per_batch = 1;
  double gpu_start_ms = 0;         // what a GPU's start costs
};

// now: start every GPU; wait: ask again once the CPU is measured; skip: the CPU finishes
// the run sooner than a GPU would start.
[[nodiscard]] inline GpuStart decide_gpu_start(const GpuStartFacts& f) noexcept {
  if (!f.cpu_in_set || f.expected_items == 0) return GpuStart::now;
  if (f.items_taken >= f.expected_items) return GpuStart::skip;
  if (f.cpu_latency_ms <= 0) return GpuStart::wait;
  const double batches_left = static_cast<double>(f.expected_items - f.items_taken) / (f.items_per_batch > 0 ? f.items_per_batch : 1);
  const double cpu_ms_left = batches_left * f.cpu_latency_ms / (f.cpu_slots > 0 ? f.cpu_slots : 1);
  return cpu_ms_left > f.gpu_start_ms ? GpuStart::now : GpuStart::skip;
}

}  // namespace streampipe::pipeline::detail
