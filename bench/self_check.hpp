// SPDX-License-Identifier: Apache-2.0
#pragma once
// A short, verified end-to-end exercise of the library (pool, streams, events, copies,
// kernels, graphs on a GPU; the host reference kernels everywhere): one row per check, its
// cells "ok" and a detail, or "FAILED" and why (then the row is not verified), and a last
// note counting the checks that passed. `demo` prints it.

#include "harness/result.hpp"

namespace streampipe::bench {

[[nodiscard]] Table self_check();

}  // namespace streampipe::bench
