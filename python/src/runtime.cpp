// SPDX-License-Identifier: Apache-2.0
// Devices, streams and events: what the chapter's stream and context lessons use. Every
// wait releases the GIL.
#include "bindings.hpp"

#include "streampipe/cuda/device.hpp"
#include "streampipe/cuda/error.hpp"
#include "streampipe/cuda/event.hpp"
#include "streampipe/cuda/stream.hpp"
#include "streampipe/jit/program.hpp"
#include "streampipe/version.hpp"

#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>

#include <fmt/format.h>

#include <cstdint>
#include <optional>
#include <string>

namespace streampipe::python {
namespace {

int runtime_version() {
  int v = 0;
  if (cudaRuntimeGetVersion(&v) != cudaSuccess) detail::clear_expected_error();
  return v;
}

int driver_version() {
  int v = 0;
  if (cudaDriverGetVersion(&v) != cudaSuccess) detail::clear_expected_error();
  return v;  // 0 without a driver
}

// The process has no usable GPU: the runtime's status, with what it means and what to do.
// An Error rather than a CudaError, since no call failed on a device (sticky means nothing).
class NoGpuError : public Error {
 public:
  NoGpuError(int index, cudaError_t status, std::string cause, std::string remedy)
      : Error({.api = Api::cuda_runtime,
               .status = static_cast<int>(status),
               .status_name = cudaGetErrorName(status),
               .description = std::move(cause),
               .call = fmt::format("cudaGetDeviceCount, for GPU {}", index),
               .file = {},
               .line = 0,
               .detail = "  " + remedy}) {}
};

// The runtime's status, read again: Device::count() keeps only the count. The cause is the
// core's own (Device::unavailable_reason: no driver, one too old, no device), which the CLI
// prints too; only the remedy is Python's.
[[noreturn]] void throw_no_gpu(int index) {
  int n = 0;
  cudaError_t status = cudaGetDeviceCount(&n);
  detail::clear_expected_error();
  if (status == cudaSuccess) status = cudaErrorNoDevice;
  const std::string cause = Device::unavailable_reason().value_or("no usable GPU");
  const char* remedy = !Device::driver_installed()              ? "Install the NVIDIA driver on a machine with an NVIDIA GPU."
                       : status == cudaErrorInsufficientDriver ? "Update the NVIDIA driver."
                                                                : "Check the GPU and its driver with nvidia-smi.";
  throw NoGpuError(index, status, cause,
                   fmt::format("{} Without a GPU, compile() still works (NVRTC needs no device) and engines run on the "
                               "host backend (Engine(..., backend=\"host\")).",
                               remedy));
}

nb::dict device_dict(const Device& d) {
  nb::dict out;
  const auto& p = d.properties();
  out["index"] = d.index();
  out["name"] = d.name();
  out["compute_capability"] = nb::make_tuple(p.major, p.minor);
  out["multiprocessors"] = d.multiprocessors();
  out["copy_engines"] = d.copy_engines();
  out["memory_bytes"] = static_cast<std::uint64_t>(p.totalGlobalMem);
  return out;
}

nb::dict info() {
  nb::dict out;
  out["version"] = std::string(version_string);
  out["cuda_runtime"] = runtime_version();
  out["cuda_driver"] = driver_version();
  int nvrtc = 0;
  try {
    nvrtc = jit::nvrtc_version();
  } catch (const std::exception&) {
    nvrtc = 0;  // NVRTC missing: runtime kernels cannot compile, the rest still works
  }
  out["nvrtc"] = nvrtc;
  out["nvrtc_library"] = nvrtc != 0 ? nb::object(nb::str(jit::nvrtc_library_path().c_str())) : nb::none();
  const std::optional<std::string> reason = Device::unavailable_reason();
  nb::list devices;
  if (!reason)
    for (int i = 0; i < Device::count(); ++i) devices.append(device_dict(Device(i)));
  out["devices"] = devices;
  out["backend"] = reason ? "host" : "gpu";
  out["reason"] = reason ? nb::object(nb::str(reason->c_str())) : nb::none();
  return out;
}

// An owning stream, usable wherever a stream is taken (__cuda_stream__).
class PyStream {
 public:
  PyStream(int device, bool non_blocking, int priority)
      : stream_(gpu(device), StreamOptions{non_blocking, priority}) {}
  [[nodiscard]] std::uintptr_t handle() const { return reinterpret_cast<std::uintptr_t>(stream_.handle()); }
  [[nodiscard]] int device() const noexcept { return stream_.device_index(); }
  [[nodiscard]] int priority() const noexcept { return stream_.priority(); }
  void synchronize() const {
    nb::gil_scoped_release release;
    stream_.synchronize();
  }
  [[nodiscard]] bool query() const { return stream_.query(); }
  [[nodiscard]] StreamRef ref() const { return stream_.ref(); }

 private:
  Stream stream_;
};

class PyEvent {
 public:
  PyEvent(int device, bool timing, bool blocking)
      : event_(gpu(device), timing ? EventTiming::enabled : EventTiming::disabled,
               blocking ? EventWait::blocking : EventWait::spin) {}
  void record(std::uintptr_t stream) {
    event_.record(StreamRef(stream_from_handle(stream), event_.device_index()));
  }
  void synchronize() const {
    nb::gil_scoped_release release;
    event_.synchronize();
  }
  [[nodiscard]] bool query() const { return event_.query(); }
  [[nodiscard]] const Event& event() const noexcept { return event_; }
  [[nodiscard]] std::uintptr_t handle() const { return reinterpret_cast<std::uintptr_t>(event_.handle()); }

 private:
  Event event_;
};

}  // namespace

Device gpu(int index) {
  if (Device::count() == 0) throw_no_gpu(index);
  return Device(index);
}

void bind_runtime(nb::module_& m) {
  m.def("info", &info, "Version, CUDA versions, the devices, and which backend an engine gets by default.");
  m.def("device_count", [] { return Device::unavailable_reason() ? 0 : Device::count(); },
        "Usable CUDA devices (0 without a GPU or driver).");
  m.def("device_unavailable_reason", &Device::unavailable_reason,
        "None when a GPU is usable, else why not (the CUDA runtime's explanation).");
  m.def("device_info", [](int index) { return device_dict(gpu(index)); }, nb::arg("index"));
  m.def("device_memory", [](int index) {
    const auto mem = gpu(index).memory_info();
    return nb::make_tuple(static_cast<std::uint64_t>(mem.free_bytes), static_cast<std::uint64_t>(mem.total_bytes));
  }, nb::arg("index"), "(free, total) bytes of a device.");
  m.def("device_synchronize", [](int index) {
    const Device d = gpu(index);
    nb::gil_scoped_release release;
    d.synchronize();
  }, nb::arg("index"), "Waits for all work on the device, from every stream.");
  m.def("set_device", [](int index) { gpu(index).make_current(); }, nb::arg("index"),
        "Makes `index` this thread's current device (its primary context).");
  m.def("current_device", [] { return Device::current().index(); });
  m.def("stream_synchronize", [](std::uintptr_t handle, int device) {
    const StreamRef s(stream_from_handle(handle), device);
    nb::gil_scoped_release release;
    s.synchronize();
  }, nb::arg("handle"), nb::arg("device"), "Waits for a stream given by its handle (any library's).");

  nb::class_<PyStream>(m, "Stream", "An owning CUDA stream (non-blocking by default).")
      .def(nb::init<int, bool, int>(), nb::arg("device") = 0, nb::arg("non_blocking") = true,
           nb::arg("priority") = 0)
      .def_prop_ro("handle", &PyStream::handle, "The cudaStream_t as an integer.")
      .def_prop_ro("device", &PyStream::device)
      .def_prop_ro("priority", &PyStream::priority)
      .def("synchronize", &PyStream::synchronize, "Waits for the stream's work (the GIL is released).")
      .def("query", &PyStream::query, "True when the stream's work has finished.")
      .def("__cuda_stream__", [](const PyStream& s) { return nb::make_tuple(0, s.handle()); },
           "The CUDA stream protocol: (version, handle).");

  nb::class_<PyEvent>(m, "Event", "A CUDA event; timing events measure GPU time between two records.")
      .def(nb::init<int, bool, bool>(), nb::arg("device") = 0, nb::arg("timing") = true,
           nb::arg("blocking") = true)
      .def("record", &PyEvent::record, nb::arg("stream"), "Records on the stream with this handle.")
      .def("synchronize", &PyEvent::synchronize)
      .def("query", &PyEvent::query)
      .def_prop_ro("handle", &PyEvent::handle)
      .def("elapsed_ms", [](const PyEvent& start, const PyEvent& end) {
        return elapsed(start.event(), end.event()).count();
      }, nb::arg("end"), "GPU milliseconds from this event to `end` (both recorded and complete).");
}

}  // namespace streampipe::python
