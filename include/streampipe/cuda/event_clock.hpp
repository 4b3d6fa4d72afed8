// SPDX-License-Identifier: Apache-2.0
#pragma once
// Places CUDA events on a host clock. An anchor event is recorded on a stream and, once it
// completed, the host clock is read: an event's host time is then that reading plus the GPU
// time from the anchor to the event. Both runtimes' lanes time their slots this way, so their
// stages line up with host-side stages (staging, callbacks) on one timeline.

#include "streampipe/cuda/event.hpp"
#include "streampipe/cuda/stream.hpp"

namespace streampipe {

class EventClock {
 public:
  // Records the anchor on `stream` and waits for it, then reads `now_ms` (the host clock, in
  // milliseconds). Throws CudaError.
  EventClock(const Device& device, StreamRef stream, double (*now_ms)());

  // `event`'s time on the host clock. Throws CudaError when it is not recorded or not
  // complete, std::logic_error when it is a non-timing event.
  [[nodiscard]] double host_ms(const Event& event) const;

 private:
  Event anchor_;
  double anchor_host_ms_ = 0;
};

}  // namespace streampipe
