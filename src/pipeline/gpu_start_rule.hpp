// SPDX-License-Identifier: Apache-2.0
#pragma once
// Whether an engine with the CPU in its set starts its next GPU: a GPU's start (its context,
// pools and the operation's set-up) takes a while and competes with the CPU's lanes for
// the host, and a started GPU's tear-down holds the end of the run. For a run of known
// length that pays only when the set would be busy long enough after the GPU joins for it
// to save more than its tear-down. Judged once the CPU's lanes have a measured speed, then
// again before each further GPU (their starts are taken one after another). Pure.

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
  double gpu_stop_ms = 0;          // what a started GPU's tear-down adds to the run's end
  int gpus_joined = 0;             // GPUs already in the set
  double set_rate = 0;             // the set's measured work per ms since the last GPU joined; 0: not measured
};

// The CPU's time to finish the work not yet taken, alone (0 while it is not measured).
[[nodiscard]] inline double cpu_ms_left(const GpuStartFacts& f) noexcept {
  if (f.expected_work <= f.work_taken || f.cpu_latency_ms <= 0) return 0;
  return (f.expected_work - f.work_taken) * f.cpu_latency_ms / (f.cpu_slots > 0 ? f.cpu_slots : 1);
}

// The set's time to finish it: at its measured rate, else each GPU in it counted as fast as
// the CPU (none is taken to be faster).
[[nodiscard]] inline double set_ms_left(const GpuStartFacts& f) noexcept {
  if (f.set_rate > 0) return f.expected_work > f.work_taken ? (f.expected_work - f.work_taken) / f.set_rate : 0;
  return cpu_ms_left(f) / (1 + (f.gpus_joined > 0 ? f.gpus_joined : 0));
}

// What the set's time left must exceed for the next GPU to pay: counted as fast as each
// member, once joined it saves 1/(members + 1) of what is then left, and that must repay
// its tear-down.
[[nodiscard]] inline double gpu_break_even_ms(const GpuStartFacts& f) noexcept {
  return f.gpu_start_ms + (2 + (f.gpus_joined > 0 ? f.gpus_joined : 0)) * f.gpu_stop_ms;
}

// now: start the next GPU; wait: ask again once the CPU is measured; skip: the set
// finishes the run sooner than another GPU would pay for itself.
[[nodiscard]] inline GpuStart decide_gpu_start(const GpuStartFacts& f) noexcept {
  if (!f.cpu_in_set || f.expected_work <= 0) return GpuStart::now;
  if (f.work_taken >= f.expected_work) return GpuStart::skip;
  if (f.cpu_latency_ms <= 0) return GpuStart::wait;
  return set_ms_left(f) > gpu_break_even_ms(f) ? GpuStart::now : GpuStart::skip;
}

}  // namespace streampipe::pipeline::detail
