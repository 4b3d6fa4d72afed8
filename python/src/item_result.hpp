// SPDX-License-Identifier: Apache-2.0
#pragma once
// An item's result as the package's ItemResult takes it: (index, label, status, error,
// exception or None, lane, device, batch_size, timing dict). Needs the GIL.
#include "bindings.hpp"

#include "streampipe/pipeline/item.hpp"

namespace streampipe::python {

[[nodiscard]] nb::tuple result_tuple(const pipeline::ItemResult& r);

}  // namespace streampipe::python
