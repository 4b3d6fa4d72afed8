// SPDX-License-Identifier: Apache-2.0
#pragma once
// The lessons' kernels as pipeline operations, each with its device form (enqueued on the
// lane's stream) and its host form (for the host backend).

#include "streampipe/ops/multiply_divide.hpp"
#include "streampipe/pipeline/operation.hpp"

namespace streampipe::ops {

// Bytes of interleaved RGB in, one luma byte per pixel out.
[[nodiscard]] pipeline::Operation gray_operation();
// Floats in, floats out; a batch of several arrays runs as one launch, one block per array.
[[nodiscard]] pipeline::Operation multiply_divide_operation(const MultiplyDivideShape& shape = {});
// y = a x + b over floats.
[[nodiscard]] pipeline::Operation affine_operation(float a, float b);

}  // namespace streampipe::ops
