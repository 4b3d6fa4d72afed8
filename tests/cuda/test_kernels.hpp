// SPDX-License-Identifier: Apache-2.0
#pragma once
#include <cstddef>

namespace streampipe::testing {
using FillIndexKernel = void (*)(int*, std::size_t, int);
using NeedsSharedKernel = void (*)(int*);
FillIndexKernel fill_index_kernel();
NeedsSharedKernel needs_shared_kernel();
}  // namespace streampipe::testing
