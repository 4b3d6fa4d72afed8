// SPDX-License-Identifier: Apache-2.0
#pragma once
// Stream is the owning handle (creates and destroys a cudaStream_t); StreamRef is a
// non-owning view that every enqueueing function takes. Neither converts from 0 or
// nullptr: the legacy default stream serializes with everything and is never implied.

#include "streampipe/cuda/device.hpp"

#include <cuda_runtime_api.h>

#include <cstddef>

namespace streampipe {

class Event;

class StreamRef {
 public:
  // A stream created elsewhere (a library's, the caller's) on `device`.
  StreamRef(cudaStream_t handle, int device) noexcept : handle_(handle), device_(device) {}
  StreamRef(std::nullptr_t, int) = delete;
  StreamRef(int, int) = delete;

  [[nodiscard]] cudaStream_t handle() const noexcept { return handle_; }
  [[nodiscard]] int device_index() const noexcept { return device_; }
  [[nodiscard]] Device device() const { return Device(device_); }

  void synchronize() const;
  // True when all enqueued work has finished; throws on an error other than "not ready".
  [[nodiscard]] bool query() const;
  // Later work on this stream waits until `event` (recorded on any stream) has completed.
  void wait(const Event& event) const;

  friend bool operator==(StreamRef a, StreamRef b) noexcept { return a.handle_ == b.handle_; }

 private:
  cudaStream_t handle_;
  int device_;
};

struct StreamOptions {
  bool non_blocking = true;  // does not synchronize with the legacy default stream
  int priority = 0;          // lower is higher priority; clamped to the device's range
};

class Stream {
 public:
  explicit Stream(const Device& device, StreamOptions options = {});
  ~Stream();
  Stream(Stream&& other) noexcept;
  Stream& operator=(Stream&& other) noexcept;
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;

  [[nodiscard]] StreamRef ref() const;  // throws std::logic_error after move
  [[nodiscard]] cudaStream_t handle() const { return ref().handle(); }
  [[nodiscard]] int device_index() const noexcept { return device_; }
  [[nodiscard]] int priority() const noexcept { return priority_; }
  [[nodiscard]] explicit operator bool() const noexcept { return handle_ != nullptr; }

  void synchronize() const { ref().synchronize(); }
  [[nodiscard]] bool query() const { return ref().query(); }
  void wait(const Event& event) const { ref().wait(event); }

  // The device's priority range as {least, greatest} (greatest is numerically smaller).
  [[nodiscard]] static std::pair<int, int> priority_range(const Device& device);

 private:
  cudaStream_t handle_ = nullptr;
  int device_ = 0;
  int priority_ = 0;
};

}  // namespace streampipe
