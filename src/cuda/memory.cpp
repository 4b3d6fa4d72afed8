// SPDX-License-Identifier: Apache-2.0
#include "streampipe/cuda/device_buffer.hpp"
#include "streampipe/cuda/pinned_buffer.hpp"

#include "driver_api.hpp"

#include <cuda.h>
#include <fmt/format.h>

#include <cstdint>
#include <stdexcept>

namespace streampipe {
namespace detail {

void throw_size_overflow(std::size_t count, std::size_t element_size) {
  throw std::length_error(
      fmt::format("allocation of {} elements of {} bytes overflows size_t", count, element_size));
}

void* device_malloc(const Device& device, std::size_t bytes) {
  if (bytes == 0) return nullptr;
  CurrentDeviceGuard guard(device);
  void* ptr = nullptr;
  SP_CUDA_CHECK(cudaMalloc(&ptr, bytes));
  return ptr;
}

void device_free(int device, void* ptr) noexcept {
  // cudaFree works on any current device for a pointer it knows, but set the owner anyway so
  // the implicit synchronization happens on the right device.
  int previous = 0;
  if (cudaGetDevice(&previous) != cudaSuccess) previous = device;
  if (previous != device) SP_CUDA_CHECK_NOTHROW(cudaSetDevice(device));
  SP_CUDA_CHECK_NOTHROW(cudaFree(ptr));
  if (previous != device) SP_CUDA_CHECK_NOTHROW(cudaSetDevice(previous));
}

void* device_malloc_async(StreamRef stream, std::size_t bytes) {
  if (bytes == 0) return nullptr;
  void* ptr = nullptr;
  SP_CUDA_CHECK(cudaMallocAsync(&ptr, bytes, stream.handle()));
  return ptr;
}

void device_free_async(StreamRef stream, void* ptr) noexcept {
  SP_CUDA_CHECK_NOTHROW(cudaFreeAsync(ptr, stream.handle()));
}

void* pinned_malloc(std::size_t bytes) {
  if (bytes == 0) return nullptr;
  void* ptr = nullptr;
  SP_CUDA_CHECK(cudaMallocHost(&ptr, bytes));
  return ptr;
}

void pinned_free(void* ptr) noexcept { SP_CUDA_CHECK_NOTHROW(cudaFreeHost(ptr)); }

}  // namespace detail

std::size_t set_default_pool_release_threshold(const Device& device, std::size_t bytes) {
  cudaMemPool_t pool = nullptr;
  SP_CUDA_CHECK(cudaDeviceGetDefaultMemPool(&pool, device.index()));
  std::uint64_t previous = 0;
  SP_CUDA_CHECK(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &previous));
  std::uint64_t value = bytes;
  SP_CUDA_CHECK(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &value));
  return static_cast<std::size_t>(previous);
}

HostRegistration::HostRegistration(void* data, std::size_t bytes) : data_(data), bytes_(bytes) {
  if (data == nullptr || bytes == 0)
    throw std::invalid_argument("HostRegistration needs a non-empty range");
  // Portable: the pinning is visible to every device, not only the current one.
  const cudaError_t status = cudaHostRegister(data, bytes, cudaHostRegisterPortable);
  if (status != cudaSuccess) {
    data_ = nullptr;
    bytes_ = 0;
    SP_CUDA_CHECK(status);
  }
}

HostRegistration& HostRegistration::operator=(HostRegistration&& o) noexcept {
  if (this != &o) {
    reset();
    data_ = std::exchange(o.data_, nullptr);
    bytes_ = std::exchange(o.bytes_, 0);
  }
  return *this;
}

void HostRegistration::reset() noexcept {
  if (data_ != nullptr) SP_CUDA_CHECK_NOTHROW(cudaHostUnregister(data_));
  data_ = nullptr;
  bytes_ = 0;
}

MemoryPlace memory_place(const void* ptr) {
  if (ptr == nullptr) return {};
  cudaPointerAttributes attrs{};
  const cudaError_t status = cudaPointerGetAttributes(&attrs, ptr);
  if (status != cudaSuccess) {
    detail::clear_expected_error();
    return {};
  }
  switch (attrs.type) {
    case cudaMemoryTypeHost: return {MemoryKind::pinned, -1};
    case cudaMemoryTypeDevice: return {MemoryKind::device, attrs.device};
    case cudaMemoryTypeManaged: return {MemoryKind::managed, attrs.device};
    default: return {};
  }
}

const char* memory_kind_name(MemoryKind kind) noexcept {
  switch (kind) {
    case MemoryKind::pageable: return "pageable";
    case MemoryKind::pinned: return "pinned";
    case MemoryKind::device: return "device";
    case MemoryKind::managed: return "managed";
  }
  return "unknown";
}

bool is_pinned(const void* ptr) { return memory_place(ptr).kind == MemoryKind::pinned; }

bool is_copy_engine_direct(const void* ptr) { return memory_place(ptr).kind != MemoryKind::pageable; }

bool is_device_mapped(const Device& device, const void* ptr, std::size_t bytes) {
  if (ptr == nullptr || bytes == 0) return false;
  // Resolved once per process; nullptr without a driver (no GPU) or when it lacks the entry.
  const auto query = driver::resolved().pointer_get_attributes;
  if (query == nullptr) return false;
  const CurrentDeviceGuard guard(device);  // the device pointer is the current context's
  // The guard leaves a thread that has not called CUDA yet without a current context (its
  // current device is already `device`), and the driver then answers "not mapped" for any
  // pointer: cudaSetDevice binds the device's primary context, once per thread and device.
  thread_local int bound = -1;
  if (bound != device.index()) {
    SP_CUDA_CHECK(cudaSetDevice(device.index()));
    bound = device.index();
  }
  unsigned type = 0;
  CUdeviceptr start = 0, device_pointer = 0;
  std::size_t size = 0;
  CUpointer_attribute attributes[] = {CU_POINTER_ATTRIBUTE_MEMORY_TYPE, CU_POINTER_ATTRIBUTE_RANGE_START_ADDR,
                                      CU_POINTER_ATTRIBUTE_RANGE_SIZE, CU_POINTER_ATTRIBUTE_DEVICE_POINTER};
  void* values[] = {&type, &start, &size, &device_pointer};
  const auto address = reinterpret_cast<std::uintptr_t>(ptr);
  // Pageable memory answers with type 0 and an empty range (CUDA_SUCCESS), not an error.
  if (query(4, attributes, values, static_cast<CUdeviceptr>(address)) != CUDA_SUCCESS) return false;
  const std::uintptr_t offset = address - static_cast<std::uintptr_t>(start);
  return type == CU_MEMORYTYPE_HOST && device_pointer == address && address >= start && offset < size &&
         bytes <= size - offset;
}

}  // namespace streampipe
