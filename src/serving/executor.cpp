// SPDX-License-Identifier: Apache-2.0
#include "streampipe/serving/executor.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstddef>
#include <stdexcept>

namespace streampipe::serving {

namespace {

bool copies(const Batch& batch, std::size_t row, RowsToCopy rows) {
  return rows == RowsToCopy::all || !batch.is_pinned(row);
}

}  // namespace

void gather_inputs(const Batch& batch, std::span<float> packed, std::size_t input_size, RowsToCopy rows) {
  if (batch.size() > batch.bucket || packed.size() < batch.bucket * input_size)
    throw std::invalid_argument(fmt::format("gather_inputs: {} rows do not fit a bucket of {} in {} floats",
                                            batch.size(), batch.bucket, packed.size()));
  for (std::size_t r = 0; r < batch.size(); ++r)
    if (copies(batch, r, rows))
      std::copy(batch.inputs[r].begin(), batch.inputs[r].end(),
                packed.begin() + static_cast<std::ptrdiff_t>(r * input_size));
}

void scatter_outputs(std::span<const float> packed, const Batch& batch, std::size_t output_size, RowsToCopy rows) {
  if (packed.size() < batch.size() * output_size)
    throw std::invalid_argument("scatter_outputs: packed outputs are smaller than the batch");
  for (std::size_t r = 0; r < batch.size(); ++r) {
    if (!copies(batch, r, rows)) continue;
    const auto first = packed.begin() + static_cast<std::ptrdiff_t>(r * output_size);
    std::copy(first, first + static_cast<std::ptrdiff_t>(output_size), batch.outputs[r].begin());
  }
}

}  // namespace streampipe::serving
