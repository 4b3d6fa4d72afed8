// SPDX-License-Identifier: Apache-2.0
#pragma once
// Where device memory comes from. A DeviceMemoryResource hands out device memory in stream
// order (the shape of RMM's device_memory_resource): allocate(stream, bytes) returns memory
// that work enqueued on `stream` after the call may use; deallocate(stream, p, bytes) takes it
// back once the work enqueued on `stream` before the call is done. DeviceResourceRef is the
// non-owning handle the library's allocating calls take (the shape of RMM's
// device_async_resource_ref): the resource must outlive every allocation made through it.
//
// Two resources are built in, today's two ways of allocating: cuda_async_resource()
// (cudaMallocAsync / cudaFreeAsync on the stream, from its device's current pool) and
// cuda_malloc_resource() (cudaMalloc / cudaFree on the stream's device: synchronous, the
// stream only names the device). An RMM resource, or any other allocator, adapts by deriving
// from DeviceMemoryResource (docs/engine.md, "Memory resources", shows one).
//
// HostMemoryResource and HostResourceRef are the same shape for page-locked host memory (no
// stream: host memory is taken and given back at once), for what the engine stages through.

#include "streampipe/cuda/stream.hpp"

#include <cstddef>

namespace streampipe {

class DeviceMemoryResource {
 public:
  virtual ~DeviceMemoryResource() = default;

  // `bytes` (> 0) of memory on `stream`'s device, ordered on `stream`. Throws CudaError (or
  // std::bad_alloc) when none is left; what a derived resource throws passes through.
  [[nodiscard]] void* allocate(StreamRef stream, std::size_t bytes) { return do_allocate(stream, bytes); }
  // Gives back `p`, which allocate(·, bytes) returned, after the work enqueued on `stream`
  // so far. Never throws: a failure is reported on stderr.
  void deallocate(StreamRef stream, void* p, std::size_t bytes) noexcept { do_deallocate(stream, p, bytes); }

 protected:
  DeviceMemoryResource() = default;
  DeviceMemoryResource(const DeviceMemoryResource&) = default;
  DeviceMemoryResource& operator=(const DeviceMemoryResource&) = default;

 private:
  virtual void* do_allocate(StreamRef stream, std::size_t bytes) = 0;
  virtual void do_deallocate(StreamRef stream, void* p, std::size_t bytes) noexcept = 0;
};

// A non-owning reference to a DeviceMemoryResource; never null, cheap to copy.
class DeviceResourceRef {
 public:
  DeviceResourceRef(DeviceMemoryResource& resource) noexcept : resource_(&resource) {}  // NOLINT: as RMM's ref

  [[nodiscard]] void* allocate(StreamRef stream, std::size_t bytes) const { return resource_->allocate(stream, bytes); }
  void deallocate(StreamRef stream, void* p, std::size_t bytes) const noexcept {
    resource_->deallocate(stream, p, bytes);
  }
  [[nodiscard]] DeviceMemoryResource& resource() const noexcept { return *resource_; }

  friend bool operator==(DeviceResourceRef a, DeviceResourceRef b) noexcept { return a.resource_ == b.resource_; }

 private:
  DeviceMemoryResource* resource_;
};

class HostMemoryResource {
 public:
  virtual ~HostMemoryResource() = default;

  // `bytes` (> 0) of page-locked host memory, so that copies to and from a device run
  // asynchronously at the link's speed. Throws what the resource throws when none is left.
  [[nodiscard]] void* allocate(std::size_t bytes) { return do_allocate(bytes); }
  // Gives back `p`, which allocate(bytes) returned; no device work may still use it. Never
  // throws.
  void deallocate(void* p, std::size_t bytes) noexcept { do_deallocate(p, bytes); }

 protected:
  HostMemoryResource() = default;
  HostMemoryResource(const HostMemoryResource&) = default;
  HostMemoryResource& operator=(const HostMemoryResource&) = default;

 private:
  virtual void* do_allocate(std::size_t bytes) = 0;
  virtual void do_deallocate(void* p, std::size_t bytes) noexcept = 0;
};

// A non-owning reference to a HostMemoryResource; never null, cheap to copy.
class HostResourceRef {
 public:
  HostResourceRef(HostMemoryResource& resource) noexcept : resource_(&resource) {}  // NOLINT: as DeviceResourceRef

  [[nodiscard]] void* allocate(std::size_t bytes) const { return resource_->allocate(bytes); }
  void deallocate(void* p, std::size_t bytes) const noexcept { resource_->deallocate(p, bytes); }
  [[nodiscard]] HostMemoryResource& resource() const noexcept { return *resource_; }

  friend bool operator==(HostResourceRef a, HostResourceRef b) noexcept { return a.resource_ == b.resource_; }

 private:
  HostMemoryResource* resource_;
};

// cudaMallocAsync / cudaFreeAsync on the stream: what StreamOrderedBuffer uses by default.
[[nodiscard]] DeviceResourceRef cuda_async_resource() noexcept;
// cudaMalloc / cudaFree on the stream's device, synchronous: what DeviceBuffer(device, count)
// does.
[[nodiscard]] DeviceResourceRef cuda_malloc_resource() noexcept;

}  // namespace streampipe
