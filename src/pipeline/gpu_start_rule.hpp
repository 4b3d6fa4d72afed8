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
  // In units of Item::work (items, when each is 1).
  double expected_work = 0;        // 0: the run's length is not known
  double work_taken = 0;           // handed to a slot so far
  bool cpu_in_set = false;
  double cpu_latency_ms = 0;       // the CPU's measured time per unit of work; 0: not measured yet
  int cpu_slots = 1;               // batches the CPU runs at once
  double gpu_start_ms = 0;         // what a GPU's start costs
};

// now: start every GPU; wait: ask again once the CPU is measured; skip: the CPU finishes
// the run sooner than a GPU would start.
[[nodiscard]] inline GpuStart decide_gpu_start(const GpuStartFacts& f) noexcept {
  if (!f.cpu_in_set || f.expected_work <= 0) return GpuStart::now;
  if (f.work_taken >= f.expected_work) return GpuStart::skip;
  if (f.cpu_latency_ms <= 0) return GpuStart::wait;
  const double cpu_ms_left = (f.expected_work - f.work_taken) * f.cpu_latency_ms / (f.cpu_slots > 0 ? f.cpu_slots : 1);
  return cpu_ms_left > f.gpu_start_ms ? GpuStart::now : GpuStart::skip;
}

}  // namespace streampipe::pipeline::detail
