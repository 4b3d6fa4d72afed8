// SPDX-License-Identifier: Apache-2.0
#pragma once
// Owning device allocations. DeviceBuffer<T> uses cudaMalloc/cudaFree (synchronous, for
// long-lived buffers) unless it is given a memory resource and a stream; StreamOrderedBuffer<T>
// uses cudaMallocAsync/cudaFreeAsync on a stream and the device's memory pool, so per-batch
// allocations cost no device sync, unless it is given another resource. Memory from a
// resource goes back to it on the stream it came from. Both are move-only; elements are
// uninitialized. Allocating throws CudaError (or what the resource throws) and
// std::length_error when count × sizeof(T) overflows.

#include "streampipe/cuda/error.hpp"
#include "streampipe/cuda/memory_resource.hpp"
#include "streampipe/cuda/stream.hpp"

#include <cstddef>
#include <limits>
#include <new>
#include <optional>
#include <span>
#include <stdexcept>
#include <type_traits>
#include <utility>

namespace streampipe {

namespace detail {
void* device_malloc(const Device& device, std::size_t bytes);
void device_free(int device, void* ptr) noexcept;
void* device_malloc_async(StreamRef stream, std::size_t bytes);
void device_free_async(StreamRef stream, void* ptr) noexcept;
[[noreturn]] void throw_size_overflow(std::size_t count, std::size_t element_size);

template <typename T>
std::size_t bytes_for(std::size_t count) {
  if (count > std::numeric_limits<std::size_t>::max() / sizeof(T))
    throw_size_overflow(count, sizeof(T));
  return count * sizeof(T);
}

// Where a buffer's memory came from and goes back to: a resource, on a stream.
struct ResourceSource {
  DeviceResourceRef resource;
  StreamRef stream;
  [[nodiscard]] void* allocate(std::size_t bytes) const { return bytes == 0 ? nullptr : resource.allocate(stream, bytes); }
  void deallocate(void* p, std::size_t bytes) const noexcept { resource.deallocate(stream, p, bytes); }
};
}  // namespace detail

template <typename T>
class DeviceBuffer {
  static_assert(std::is_trivially_copyable_v<T>, "device buffers hold trivially copyable types");

 public:
  DeviceBuffer() = default;
  // cudaMalloc on `device`.
  DeviceBuffer(const Device& device, std::size_t count)
      : data_(static_cast<T*>(detail::device_malloc(device, detail::bytes_for<T>(count)))),
        size_(count),
        device_(device.index()) {}
  // From `resource`, ordered on `stream` (and given back on it), on the stream's device.
  DeviceBuffer(std::size_t count, StreamRef stream, DeviceResourceRef resource)
      : source_(detail::ResourceSource{resource, stream}),
        data_(static_cast<T*>(source_->allocate(detail::bytes_for<T>(count)))),
        size_(count),
        device_(stream.device_index()) {}
  ~DeviceBuffer() { reset(); }
  DeviceBuffer(DeviceBuffer&& o) noexcept
      : source_(o.source_), data_(std::exchange(o.data_, nullptr)), size_(std::exchange(o.size_, 0)),
        device_(o.device_) {}
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept {
    if (this != &o) {
      reset();
      source_ = o.source_;
      data_ = std::exchange(o.data_, nullptr);
      size_ = std::exchange(o.size_, 0);
      device_ = o.device_;
    }
    return *this;
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  [[nodiscard]] T* data() const noexcept { return data_; }
  [[nodiscard]] std::size_t size() const noexcept { return size_; }
  [[nodiscard]] std::size_t bytes() const noexcept { return size_ * sizeof(T); }
  [[nodiscard]] bool empty() const noexcept { return size_ == 0; }
  [[nodiscard]] int device_index() const noexcept { return device_; }
  [[nodiscard]] std::span<T> span() const noexcept { return {data_, size_}; }

  void reset() noexcept {
    if (data_ != nullptr) {
      if (source_)
        source_->deallocate(data_, bytes());
      else
        detail::device_free(device_, data_);
    }
    data_ = nullptr;
    size_ = 0;
  }

 private:
  std::optional<detail::ResourceSource> source_;  // empty: cudaMalloc'd
  T* data_ = nullptr;
  std::size_t size_ = 0;
  int device_ = 0;
};

template <typename T>
class StreamOrderedBuffer {
  static_assert(std::is_trivially_copyable_v<T>, "device buffers hold trivially copyable types");

 public:
  StreamOrderedBuffer(StreamRef stream, std::size_t count, DeviceResourceRef resource = cuda_async_resource())
      : source_{resource, stream}, data_(static_cast<T*>(source_.allocate(detail::bytes_for<T>(count)))), size_(count) {}
  // The free is ordered after all work enqueued on `stream()` before destruction. Work on
  // other streams that uses the buffer must be ordered before it (wait on an event).
  ~StreamOrderedBuffer() { reset(); }
  StreamOrderedBuffer(StreamOrderedBuffer&& o) noexcept
      : source_(o.source_), data_(std::exchange(o.data_, nullptr)), size_(std::exchange(o.size_, 0)) {}
  StreamOrderedBuffer& operator=(StreamOrderedBuffer&& o) noexcept {
    if (this != &o) {
      reset();
      source_ = o.source_;
      data_ = std::exchange(o.data_, nullptr);
      size_ = std::exchange(o.size_, 0);
    }
    return *this;
  }
  StreamOrderedBuffer(const StreamOrderedBuffer&) = delete;
  StreamOrderedBuffer& operator=(const StreamOrderedBuffer&) = delete;

  [[nodiscard]] T* data() const noexcept { return data_; }
  [[nodiscard]] std::size_t size() const noexcept { return size_; }
  [[nodiscard]] std::size_t bytes() const noexcept { return size_ * sizeof(T); }
  [[nodiscard]] std::span<T> span() const noexcept { return {data_, size_}; }
  [[nodiscard]] StreamRef stream() const noexcept { return source_.stream; }
  [[nodiscard]] DeviceResourceRef resource() const noexcept { return source_.resource; }

  void reset() noexcept {
    if (data_ != nullptr) source_.deallocate(data_, bytes());
    data_ = nullptr;
    size_ = 0;
  }

 private:
  detail::ResourceSource source_;
  T* data_ = nullptr;
  std::size_t size_ = 0;
};

// Keeps freed stream-ordered memory in the device's default pool up to `bytes` instead of
// returning it to the OS at every synchronization (the default threshold is 0), so
// repeated runs reuse it. Returns the previous threshold.
std::size_t set_default_pool_release_threshold(const Device& device, std::size_t bytes);

}  // namespace streampipe
