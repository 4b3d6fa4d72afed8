// SPDX-License-Identifier: Apache-2.0
#pragma once
// The four events that time one slot (a batch in flight on a lane's stream), recorded in
// stream order: start, inputs in (the copies to the device done), computed, done (the copies
// back done). The engine's lanes and the batcher's executor record the same four marks and
// read them as host times (through an EventClock) or as the intervals between them.

#include "streampipe/cuda/event.hpp"
#include "streampipe/cuda/event_clock.hpp"

namespace streampipe {

// The four marks on the host clock, in milliseconds.
struct SlotTimes {
  double start_ms = 0, inputs_in_ms = 0, computed_ms = 0, done_ms = 0;
};

// GPU time between the marks: copies in, compute, copies out.
struct SlotIntervals {
  double in_ms = 0, compute_ms = 0, out_ms = 0;
};

// What was recorded: every mark, or only start and done (a graph replay, whose copies ran
// inside the graph: one span, inputs in read as start and computed as done).
enum class SlotSpan { stages, whole };

class SlotEvents {
 public:
  // Events on `device`, timed or not (untimed ones only order and signal: times() and
  // intervals() then throw std::logic_error). "inputs in" and "done" wait as told (the
  // threads that wait for a slot wait on those two: blocking-sync sleeps, spin polls); start
  // and computed are never waited for. Throws CudaError.
  SlotEvents(const Device& device, EventTiming timing, EventWait inputs_in_wait, EventWait done_wait);

  Event start, inputs_in, computed, done;

  // The marks on `clock`, once `done` completed. Throws CudaError when one of the marks read
  // was not recorded or has not completed.
  [[nodiscard]] SlotTimes times(const EventClock& clock, SlotSpan span = SlotSpan::stages) const;
  // The intervals between the four marks, once `done` completed. Throws CudaError as times().
  [[nodiscard]] SlotIntervals intervals() const;
};

}  // namespace streampipe
