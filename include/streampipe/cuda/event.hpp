// SPDX-License-Identifier: Apache-2.0
#pragma once
// Owning CUDA event. Timing events measure intervals between two records on the GPU
// (resolution about 0.5 us); non-timing events are cheaper and serve only for ordering.
// Blocking-sync events put a waiting host thread to sleep instead of spinning.

#include "streampipe/cuda/stream.hpp"

#include <cuda_runtime_api.h>

#include <chrono>

namespace streampipe {

enum class EventTiming { enabled, disabled };
enum class EventWait { spin, blocking };

using Milliseconds = std::chrono::duration<double, std::milli>;

class Event {
 public:
  explicit Event(const Device& device, EventTiming timing = EventTiming::enabled,
                 EventWait wait = EventWait::spin);
  ~Event();
  Event(Event&& other) noexcept;
  Event& operator=(Event&& other) noexcept;
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;

  void record(StreamRef stream);
  void synchronize() const;
  [[nodiscard]] bool query() const;  // true once the recorded work has completed
  [[nodiscard]] cudaEvent_t handle() const;  // throws std::logic_error after move
  [[nodiscard]] bool timing() const noexcept { return timing_ == EventTiming::enabled; }
  [[nodiscard]] int device_index() const noexcept { return device_; }

 private:
  cudaEvent_t handle_ = nullptr;
  int device_ = 0;
  EventTiming timing_ = EventTiming::enabled;
};

// GPU time between two completed timing events. Throws CudaError if either is not
// recorded or not complete, std::logic_error if either is a non-timing event.
[[nodiscard]] Milliseconds elapsed(const Event& start, const Event& end);

}  // namespace streampipe
