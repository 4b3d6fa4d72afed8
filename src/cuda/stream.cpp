// SPDX-License-Identifier: Apache-2.0
#include "streampipe/cuda/stream.hpp"

#include "streampipe/cuda/error.hpp"
#include "streampipe/cuda/event.hpp"

#include <algorithm>
#include <stdexcept>
#include <utility>

namespace streampipe {

void StreamRef::synchronize() const { SP_CUDA_CHECK(cudaStreamSynchronize(handle_)); }

bool StreamRef::query() const {
  const cudaError_t status = cudaStreamQuery(handle_);
  if (status == cudaErrorNotReady) {
    return false;
  }
  SP_CUDA_CHECK(status);
  return true;
}

void StreamRef::wait(const Event& event) const {
  SP_CUDA_CHECK(cudaStreamWaitEvent(handle_, event.handle(), 0));
}

std::pair<int, int> Stream::priority_range(const Device& device) {
  CurrentDeviceGuard guard(device);
  int least = 0;
  int greatest = 0;
  SP_CUDA_CHECK(cudaDeviceGetStreamPriorityRange(&least, &greatest));
  return {least, greatest};
}

Stream::Stream(const Device& device, StreamOptions options) : device_(device.index()) {
  const auto [least, greatest] = priority_range(device);
  priority_ = std::clamp(options.priority, greatest, least);
  CurrentDeviceGuard guard(device);
  const unsigned flags = options.non_blocking ? cudaStreamNonBlocking : cudaStreamDefault;
  SP_CUDA_CHECK(cudaStreamCreateWithPriority(&handle_, flags, priority_));
}

Stream::~Stream() {
  if (handle_ != nullptr) SP_CUDA_CHECK_NOTHROW(cudaStreamDestroy(handle_));
}

Stream::Stream(Stream&& other) noexcept
    : handle_(std::exchange(other.handle_, nullptr)),
      device_(other.device_),
      priority_(other.priority_) {}

Stream& Stream::operator=(Stream&& other) noexcept {
  if (this != &other) {
    if (handle_ != nullptr) SP_CUDA_CHECK_NOTHROW(cudaStreamDestroy(handle_));
    handle_ = std::exchange(other.handle_, nullptr);
    device_ = other.device_;
    priority_ = other.priority_;
  }
  return *this;
}

StreamRef Stream::ref() const {
  if (handle_ == nullptr) throw std::logic_error("use of a moved-from streampipe::Stream");
  return StreamRef(handle_, device_);
}

}  // namespace streampipe
