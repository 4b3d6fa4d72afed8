// SPDX-License-Identifier: Apache-2.0
// streampipe._core: the C++ half of the Python package.
#include "bindings.hpp"

#include "streampipe/version.hpp"

NB_MODULE(_core, m) {
  m.doc() = "streampipe's C++ core (use the streampipe package, not this module)";
  // The C++ library's version, read without touching CUDA (info() asks the driver).
  m.attr("__version__") = streampipe::version_string;
  // The CUDA major version built against: the NVIDIA wheels' folder (nvidia/cu13) and
  // NVRTC's soname carry it.
  m.attr("cuda_major") = CUDART_VERSION / 1000;
  // An engine or kernel still referenced at exit (by a traceback, a global) is freed by the
  // process's end, not a leak to report.
  nanobind::set_leak_warnings(false);
  streampipe::python::bind_errors(m);
  streampipe::python::bind_runtime(m);
  streampipe::python::bind_memory(m);
  streampipe::python::bind_kernels(m);
  streampipe::python::bind_operations(m);
  streampipe::python::bind_engine(m);
  streampipe::python::bind_plan(m);
  streampipe::python::bind_images(m);
  streampipe::python::bind_files(m);
}
