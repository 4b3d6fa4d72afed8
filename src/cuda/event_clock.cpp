// SPDX-License-Identifier: Apache-2.0
#include "streampipe/cuda/event_clock.hpp"

namespace streampipe {

EventClock::EventClock(const Device& device, StreamRef stream, double (*now_ms)()) : anchor_(device) {
  anchor_.record(stream);
  anchor_.synchronize();
  anchor_host_ms_ = now_ms();
}

double EventClock::host_ms(const Event& event) const { return anchor_host_ms_ + elapsed(anchor_, event).count(); }

}  // namespace streampipe
