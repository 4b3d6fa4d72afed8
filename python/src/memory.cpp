// SPDX-License-Identifier: Apache-2.0
// Memory the Python package hands out (device allocations, pinned host blocks from the
// process-wide pool), copies between any two of them, and DLPack in both directions.
#include "bindings.hpp"

#include "streampipe/cuda/device.hpp"
#include "streampipe/cuda/device_buffer.hpp"
#include "streampipe/cuda/error.hpp"
#include "streampipe/cuda/pinned_buffer.hpp"
#include "streampipe/cuda/pinned_pool.hpp"

#include <nanobind/ndarray.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <cstdint>
#include <utility>
#include <vector>

namespace streampipe::python {
namespace {

// Owns device memory; Python's DeviceArray puts shape and dtype on top.
class DeviceAllocation {
 public:
  DeviceAllocation(std::size_t bytes, int device) : buffer_(gpu(device), bytes) {}
  [[nodiscard]] std::uintptr_t ptr() const noexcept { return reinterpret_cast<std::uintptr_t>(buffer_.data()); }
  [[nodiscard]] std::size_t nbytes() const noexcept { return buffer_.bytes(); }
  [[nodiscard]] int device() const noexcept { return buffer_.device_index(); }

 private:
  DeviceBuffer<std::byte> buffer_;
};

// A block of the pinned pool as a 1-D numpy uint8 array that returns the block when the
// array (and every view of it) is gone.
nb::ndarray<nb::numpy, std::uint8_t, nb::ndim<1>> pinned_bytes(std::size_t bytes) {
  auto* block = new PinnedBlock(PinnedPool::global().acquire(bytes));
  nb::capsule owner(block, [](void* p) noexcept { delete static_cast<PinnedBlock*>(p); });
  const std::size_t shape[1] = {bytes};
  return {block->data(), 1, shape, owner};
}

void copy(std::uintptr_t dst, std::uintptr_t src, std::size_t bytes, std::uintptr_t stream, int device) {
  if (bytes == 0) return;
  const CurrentDeviceGuard guard{gpu(device)};
  nb::gil_scoped_release release;
  auto* d = reinterpret_cast<void*>(dst);
  const auto* s = reinterpret_cast<const void*>(src);
  if (stream == 0) {
    SP_CUDA_CHECK(cudaMemcpy(d, s, bytes, cudaMemcpyDefault));
  } else {
    SP_CUDA_CHECK(cudaMemcpyAsync(d, s, bytes, cudaMemcpyDefault, stream_from_handle(stream)));
  }
}

void fill_bytes(std::uintptr_t dst, int value, std::size_t bytes, std::uintptr_t stream, int device) {
  if (bytes == 0) return;
  const CurrentDeviceGuard guard{gpu(device)};
  nb::gil_scoped_release release;
  auto* d = reinterpret_cast<void*>(dst);
  if (stream == 0) {
    SP_CUDA_CHECK(cudaMemset(d, value, bytes));
  } else {
    SP_CUDA_CHECK(cudaMemsetAsync(d, value, bytes, stream_from_handle(stream)));
  }
}

std::pair<std::string, int> pointer_place(std::uintptr_t ptr) {
  if (Device::unavailable_reason()) return {"pageable", -1};
  const MemoryPlace place = memory_place(reinterpret_cast<const void*>(ptr));
  return {memory_kind_name(place.kind), place.device};
}

// A DLPack capsule over device memory that keeps `owner` alive until its consumer is done.
nb::ndarray<> dlpack_view(std::uintptr_t ptr, const std::vector<std::size_t>& shape, const std::vector<std::int64_t>& strides,
                          std::uint8_t code, std::uint8_t bits, int device, nb::handle owner) {
  nb::dlpack::dtype dtype{code, bits, 1};
  return nb::ndarray<>(reinterpret_cast<void*>(ptr), shape.size(), shape.data(), owner,
                       strides.empty() ? nullptr : strides.data(), dtype, nb::device::cuda::value, device);
}

// What a DLPack producer (or a buffer-protocol object) holds: (ptr, shape, strides in
// elements, (code, bits, lanes), device_type, device_id).
nb::tuple dlpack_describe(const nb::ndarray<>& a) {
  nb::list shape, strides;
  for (std::size_t i = 0; i < a.ndim(); ++i) {
    shape.append(a.shape(i));
    strides.append(a.stride(i));
  }
  const auto dt = a.dtype();
  return nb::make_tuple(reinterpret_cast<std::uintptr_t>(a.data()), nb::tuple(shape), nb::tuple(strides),
                        nb::make_tuple(dt.code, dt.bits, dt.lanes), a.device_type(), a.device_id());
}

}  // namespace

void bind_memory(nb::module_& m) {
  nb::class_<DeviceAllocation>(m, "DeviceAllocation", "Device memory (cudaMalloc) owned by Python.")
      .def(nb::init<std::size_t, int>(), nb::arg("nbytes"), nb::arg("device") = 0)
      .def_prop_ro("ptr", &DeviceAllocation::ptr)
      .def_prop_ro("nbytes", &DeviceAllocation::nbytes)
      .def_prop_ro("device", &DeviceAllocation::device);
  m.def("pinned_bytes", &pinned_bytes, nb::arg("nbytes"),
        "A page-locked block from the process-wide pool as a numpy uint8 array.");
  m.def("copy", &copy, nb::arg("dst"), nb::arg("src"), nb::arg("nbytes"), nb::arg("stream") = 0,
        nb::arg("device") = 0,
        "Copies nbytes between any host/device addresses; on `stream` when given, else synchronously.");
  m.def("fill_bytes", &fill_bytes, nb::arg("dst"), nb::arg("value"), nb::arg("nbytes"), nb::arg("stream") = 0,
        nb::arg("device") = 0, "cudaMemset over device memory.");
  m.def("pointer_place", &pointer_place, nb::arg("ptr"),
        "(kind, device): kind is pageable, pinned, device or managed.");
  m.def("dlpack_view", &dlpack_view, nb::arg("ptr"), nb::arg("shape"), nb::arg("strides"), nb::arg("code"),
        nb::arg("bits"), nb::arg("device"), nb::arg("owner"));
  m.def("dlpack_describe", &dlpack_describe, nb::arg("array"));
}

}  // namespace streampipe::python
