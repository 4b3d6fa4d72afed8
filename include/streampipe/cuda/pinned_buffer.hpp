// SPDX-License-Identifier: Apache-2.0
#pragma once
// Page-locked host memory. PinnedBuffer<T> owns a cudaMallocHost allocation (expensive:
// about 0.5 ms per MiB; reuse it, or take blocks from PinnedPool), or memory from a
// HostMemoryResource it was given, which it gives back to that resource. HostRegistration
// pins memory the caller already owns (cudaHostRegister) for its own lifetime.

#include "streampipe/cuda/device_buffer.hpp"

#include <cstddef>
#include <optional>
#include <span>
#include <type_traits>
#include <utility>

namespace streampipe {

namespace detail {
void* pinned_malloc(std::size_t bytes);
void pinned_free(void* ptr) noexcept;
}  // namespace detail

template <typename T>
class PinnedBuffer {
  static_assert(std::is_trivially_copyable_v<T>, "pinned buffers hold trivially copyable types");

 public:
  PinnedBuffer() = default;
  // cudaMallocHost. Throws CudaError, or std::length_error when count × sizeof(T) overflows.
  explicit PinnedBuffer(std::size_t count)
      : data_(static_cast<T*>(detail::pinned_malloc(detail::bytes_for<T>(count)))), size_(count) {}
  // From `resource`, which must hand out page-locked memory and outlive the buffer. Throws
  // what the resource throws, or std::length_error.
  PinnedBuffer(std::size_t count, HostResourceRef resource)
      : resource_(resource),
        data_(count == 0 ? nullptr : static_cast<T*>(resource.allocate(detail::bytes_for<T>(count)))),
        size_(count) {}
  ~PinnedBuffer() { reset(); }
  PinnedBuffer(PinnedBuffer&& o) noexcept
      : resource_(o.resource_), data_(std::exchange(o.data_, nullptr)), size_(std::exchange(o.size_, 0)) {}
  PinnedBuffer& operator=(PinnedBuffer&& o) noexcept {
    if (this != &o) {
      reset();
      resource_ = o.resource_;
      data_ = std::exchange(o.data_, nullptr);
      size_ = std::exchange(o.size_, 0);
    }
    return *this;
  }
  PinnedBuffer(const PinnedBuffer&) = delete;
  PinnedBuffer& operator=(const PinnedBuffer&) = delete;

  [[nodiscard]] T* data() const noexcept { return data_; }
  [[nodiscard]] std::size_t size() const noexcept { return size_; }
  [[nodiscard]] std::size_t bytes() const noexcept { return size_ * sizeof(T); }
  [[nodiscard]] std::span<T> span() const noexcept { return {data_, size_}; }
  T& operator[](std::size_t i) const noexcept { return data_[i]; }
  T* begin() const noexcept { return data_; }
  T* end() const noexcept { return data_ + size_; }

  void reset() noexcept {
    if (data_ != nullptr) {
      if (resource_)
        resource_->deallocate(data_, bytes());
      else
        detail::pinned_free(data_);
    }
    data_ = nullptr;
    size_ = 0;
  }

 private:
  std::optional<HostResourceRef> resource_;  // empty: cudaMallocHost'd
  T* data_ = nullptr;
  std::size_t size_ = 0;
};

class HostRegistration {
 public:
  HostRegistration() = default;
  // Pins [data, data + bytes). The memory must outlive the registration.
  HostRegistration(void* data, std::size_t bytes);
  template <typename T>
  explicit HostRegistration(std::span<T> s) : HostRegistration(const_cast<std::remove_const_t<T>*>(s.data()), s.size_bytes()) {}
  ~HostRegistration() { reset(); }
  HostRegistration(HostRegistration&& o) noexcept
      : data_(std::exchange(o.data_, nullptr)), bytes_(std::exchange(o.bytes_, 0)) {}
  HostRegistration& operator=(HostRegistration&& o) noexcept;
  HostRegistration(const HostRegistration&) = delete;
  HostRegistration& operator=(const HostRegistration&) = delete;

  [[nodiscard]] void* data() const noexcept { return data_; }
  [[nodiscard]] std::size_t bytes() const noexcept { return bytes_; }
  void reset() noexcept;

 private:
  void* data_ = nullptr;
  std::size_t bytes_ = 0;
};

// True when `ptr` is page-locked memory known to CUDA (cudaMallocHost or registered).
[[nodiscard]] bool is_pinned(const void* ptr);

// What CUDA knows of the memory at `ptr`; pageable for memory it does not know (and for
// everything when there is no usable driver). `device` is the owning GPU for device and
// managed memory, -1 otherwise.
enum class MemoryKind { pageable, pinned, device, managed };
struct MemoryPlace {
  MemoryKind kind = MemoryKind::pageable;
  int device = -1;
};
[[nodiscard]] MemoryPlace memory_place(const void* ptr);
[[nodiscard]] const char* memory_kind_name(MemoryKind kind) noexcept;

// True when a copy engine reads or writes `ptr` at full speed as it is: pinned host memory,
// device memory or managed memory (any GPU: with unified addressing cudaMemcpyDefault
// finds the way), never pageable memory.
[[nodiscard]] bool is_copy_engine_direct(const void* ptr);

// True when kernels on `device` can read and write all of [ptr, ptr + bytes) in place, at
// these addresses: it lies inside one page-locked host allocation (cudaMallocHost,
// cudaHostAlloc, cudaHostRegister) mapped for the device at its host address, as it is
// with unified addressing. False for pageable memory, device memory and empty ranges.
// About 0.15 us (one driver query).
[[nodiscard]] bool is_device_mapped(const Device& device, const void* ptr, std::size_t bytes);

}  // namespace streampipe
