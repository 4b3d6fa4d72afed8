// SPDX-License-Identifier: Apache-2.0
#include "streampipe/cuda/slot_events.hpp"

namespace streampipe {

SlotEvents::SlotEvents(const Device& device, EventTiming timing, EventWait inputs_in_wait, EventWait done_wait)
    : start(device, timing),
      inputs_in(device, timing, inputs_in_wait),
      computed(device, timing),
      done(device, timing, done_wait) {}

SlotTimes SlotEvents::times(const EventClock& clock, SlotSpan span) const {
  SlotTimes t;
  t.start_ms = clock.host_ms(start);
  t.done_ms = clock.host_ms(done);
  if (span == SlotSpan::whole) {
    t.inputs_in_ms = t.start_ms;
    t.computed_ms = t.done_ms;
  } else {
    t.inputs_in_ms = clock.host_ms(inputs_in);
    t.computed_ms = clock.host_ms(computed);
  }
  return t;
}

SlotIntervals SlotEvents::intervals() const {
  return {elapsed(start, inputs_in).count(), elapsed(inputs_in, computed).count(), elapsed(computed, done).count()};
}

}  // namespace streampipe
