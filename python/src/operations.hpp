// SPDX-License-Identifier: Apache-2.0
#pragma once
// What an engine from Python applies: a built-in operation, or a runtime kernel with a
// launch rule. Shared by operations.cpp (which builds them) and engine.cpp (which runs them).

#include "streampipe/pipeline/operation.hpp"

namespace streampipe::python {

struct PyOperation {
  pipeline::Operation op;
  bool has_device = false;  // can run on the GPU backend
  bool has_host = false;    // can run on the host backend
};

}  // namespace streampipe::python
