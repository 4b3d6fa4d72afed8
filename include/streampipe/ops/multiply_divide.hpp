// SPDX-License-Identifier: Apache-2.0
#pragma once
// The 200-array lesson's kernel: multiply each element by 2 and divide it by 2, `repeats`
// times (so out == in for finite inputs, with real work done). The lesson launches it with
// one block of 64 threads per array; multiply_divide_batched() covers many arrays with one
// launch (one block per array) so small items are not serialized on a few streams.

#include "streampipe/cuda/stream.hpp"
#include "streampipe/pipeline/item_descriptor.hpp"

#include <cstddef>
#include <span>

namespace streampipe::ops {

struct MultiplyDivideShape {
  unsigned blocks = 1;    // the lesson: a single block
  unsigned threads = 64;  // of 64 threads
  int repeats = 50;
};

void multiply_divide(StreamRef stream, const float* in, float* out, std::size_t n,
                     const MultiplyDivideShape& shape = {});

// Many arrays in one launch, one block of shape.threads per array: array k is
// items[k].in_bytes of floats at in_base + items[k].in_offset (device memory, like `items`).
void multiply_divide_batched(StreamRef stream, const pipeline::ItemDescriptor* items, std::size_t count,
                             const std::byte* in_base, std::byte* out_base, const MultiplyDivideShape& shape = {});

// CPU version with the same float operations (the host backend and test reference).
void multiply_divide_host(std::span<const float> in, std::span<float> out, int repeats = 50);

}  // namespace streampipe::ops
