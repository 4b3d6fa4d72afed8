// SPDX-License-Identifier: Apache-2.0
#pragma once
// The parts of the Python module streampipe._core, one function per file. The Python package
// (python/streampipe) builds the user-facing API on these: array descriptions, dtype checks
// and futures live there; what must run without the GIL or on the engine's threads lives
// here.

#include <nanobind/nanobind.h>
// In every file: a file that converted std::string (or a pair) without its caster would
// instantiate a different nb::cast that the linker may pick for all of them.
#include <nanobind/stl/array.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>

#include "streampipe/cuda/device.hpp"

#include <cuda_runtime_api.h>

#include <exception>
#include <string>

namespace streampipe::python {

namespace nb = nanobind;

void bind_errors(nb::module_& m);      // errors.cpp: exception classes and translation
void bind_runtime(nb::module_& m);     // runtime.cpp: info, devices, streams, events
void bind_memory(nb::module_& m);      // memory.cpp: device/pinned allocations, copies, DLPack
void bind_kernels(nb::module_& m);     // kernels.cpp: SourceModule, Elementwise, Reduction
void bind_operations(nb::module_& m);  // operations.cpp: what an engine applies
void bind_engine(nb::module_& m);      // engine.cpp: the pipeline engine over arrays
void bind_plan(nb::module_& m);        // plan.cpp: the planner's choice for a sample item
void bind_images(nb::module_& m);      // images.cpp: PNG/JPEG files
void bind_files(nb::module_& m);       // files.cpp: text files written atomically

// The Python exception object for a C++ exception (the classes of errors.cpp, ValueError,
// or the original Python exception when the C++ one carries it). Needs the GIL.
[[nodiscard]] nb::object to_python_exception(const std::exception_ptr& error);

// Device(index) for an index the user gave. Where the process has no usable GPU at all, a
// streampipe::Error (streampipe.Error) naming why - no NVIDIA driver, a driver older than
// the runtime, no device - and what to do, rather than Device's "GPU index 0 does not
// exist" (IndexError); an index past the GPUs there are stays an IndexError (runtime.cpp).
[[nodiscard]] Device gpu(int index);

// `text` when it holds no NUL byte; std::invalid_argument (ValueError) "<what>: embedded
// null byte" otherwise, as Python's open() says (files.cpp).
const std::string& without_nul(const std::string& text, const char* what);

// A stream handle given from Python (0 means: the caller gave none; see stream_or_default).
[[nodiscard]] inline cudaStream_t stream_from_handle(std::uintptr_t handle) noexcept {
  return reinterpret_cast<cudaStream_t>(handle);
}

}  // namespace streampipe::python
