// SPDX-License-Identifier: Apache-2.0
#include "streampipe/cuda/event.hpp"

#include "streampipe/cuda/error.hpp"

#include <stdexcept>
#include <utility>

namespace streampipe {

Event::Event(const Device& device, EventTiming timing, EventWait wait)
    : device_(device.index()), timing_(timing) {
  unsigned flags = cudaEventDefault;
  if (timing == EventTiming::disabled) flags |= cudaEventDisableTiming;
  if (wait == EventWait::blocking) flags |= cudaEventBlockingSync;
  CurrentDeviceGuard guard(device);
  SP_CUDA_CHECK(cudaEventCreateWithFlags(&handle_, flags));
}

Event::~Event() {
  if (handle_ != nullptr) SP_CUDA_CHECK_NOTHROW(cudaEventDestroy(handle_));
}

Event::Event(Event&& other) noexcept
    : handle_(std::exchange(other.handle_, nullptr)), device_(other.device_), timing_(other.timing_) {}

Event& Event::operator=(Event&& other) noexcept {
  if (this != &other) {
    if (handle_ != nullptr) SP_CUDA_CHECK_NOTHROW(cudaEventDestroy(handle_));
    handle_ = std::exchange(other.handle_, nullptr);
    device_ = other.device_;
    timing_ = other.timing_;
  }
  return *this;
}

cudaEvent_t Event::handle() const {
  if (handle_ == nullptr) throw std::logic_error("use of a moved-from streampipe::Event");
  return handle_;
}

void Event::record(StreamRef stream) { SP_CUDA_CHECK(cudaEventRecord(handle(), stream.handle())); }

void Event::synchronize() const { SP_CUDA_CHECK(cudaEventSynchronize(handle())); }

bool Event::query() const {
  const cudaError_t status = cudaEventQuery(handle());
  if (status == cudaErrorNotReady) return false;
  SP_CUDA_CHECK(status);
  return true;
}

Milliseconds elapsed(const Event& start, const Event& end) {
  if (!start.timing() || !end.timing())
    throw std::logic_error("elapsed() needs two timing events (EventTiming::enabled)");
  float ms = 0.0f;
  SP_CUDA_CHECK(cudaEventElapsedTime(&ms, start.handle(), end.handle()));
  return Milliseconds(static_cast<double>(ms));
}

}  // namespace streampipe
