// SPDX-License-Identifier: Apache-2.0
// The two built-in device memory resources: today's cudaMallocAsync and cudaMalloc paths
// (memory.cpp), behind the resource interface.
#include "streampipe/cuda/memory_resource.hpp"

#include "streampipe/cuda/device_buffer.hpp"

namespace streampipe {
namespace {

class CudaAsyncResource final : public DeviceMemoryResource {
  void* do_allocate(StreamRef stream, std::size_t bytes) override { return detail::device_malloc_async(stream, bytes); }
  void do_deallocate(StreamRef stream, void* p, std::size_t) noexcept override {
    detail::device_free_async(stream, p);
  }
};

class CudaMallocResource final : public DeviceMemoryResource {
  void* do_allocate(StreamRef stream, std::size_t bytes) override {
    return detail::device_malloc(stream.device(), bytes);
  }
  void do_deallocate(StreamRef stream, void* p, std::size_t) noexcept override {
    detail::device_free(stream.device_index(), p);
  }
};

}  // namespace

DeviceResourceRef cuda_async_resource() noexcept {
  // Stateless: one for the process, never destroyed (a buffer may be freed from a static
  // destructor after this function's statics would have gone).
  static auto* resource = new CudaAsyncResource();
  return *resource;
}

DeviceResourceRef cuda_malloc_resource() noexcept {
  static auto* resource = new CudaMallocResource();
  return *resource;
}

}  // namespace streampipe
