// SPDX-License-Identifier: Apache-2.0
#pragma once
// Test kernels for models with mapped I/O (ModelLane::enqueue_rows): row tables in host
// memory mapped for the device, null input rows reading as zeros, null output rows skipped.

#include "streampipe/cuda/stream.hpp"

#include <cstddef>

namespace streampipe::serving::test_support {

// out_rows[r] = in_rows[(r + 1) % rows], `width` floats a row: each output row depends on
// another row, so a padding row that did not read as zeros would show.
void rotate_rows(StreamRef stream, const float* const* in_rows, float* const* out_rows, std::size_t rows,
                 std::size_t width);

}  // namespace streampipe::serving::test_support
