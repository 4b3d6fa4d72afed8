// SPDX-License-Identifier: Apache-2.0
#pragma once
// y = a * x + b over float arrays: the light, memory-bound kernel used to measure how close
// a chunked pipeline gets to the copy engines' limit (its device time is a few percent of
// the transfer time).

#include "streampipe/cuda/stream.hpp"

#include <cstddef>
#include <span>

namespace streampipe::ops {

void affine(StreamRef stream, const float* x, float* y, std::size_t n, float a, float b);
void affine_host(std::span<const float> x, std::span<float> y, float a, float b);

}  // namespace streampipe::ops
