// SPDX-License-Identifier: Apache-2.0
// streampipe._core: the C++ half of the Python package.
#include "bindings.hpp"

NB_MODULE(_core, m) {
  m.doc() = "streampipe's C++ core (use the streampipe package, not this module)";
  // An engine or kernel still referenced at exit (by a traceback, a global) is freed by the
  // process's end, not a leak to report.
  nanobind::set_leak_warnings(false);
  streampipe::python::bind_errors(m);
  streampipe::python::bind_runtime(m);
  streampipe::python::bind_memory(m);
  streampipe::python::bind_kernels(m);
  streampipe::python::bind_operations(m);
  streampipe::python::bind_engine(m);
  streampipe::python::bind_images(m);
  streampipe::python::bind_files(m);
}
