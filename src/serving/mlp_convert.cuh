// SPDX-License-Identifier: Apache-2.0
#pragma once
// Float <-> bf16 conversion kernels for the MLP's input and output (device side of mlp_model).

#include "streampipe/cuda/stream.hpp"

#include <cstddef>
#include <cstdint>

namespace streampipe::serving::detail {
void float_to_bf16(StreamRef stream, const float* in, std::uint16_t* out, std::size_t n);
void bf16_to_float(StreamRef stream, const std::uint16_t* in, float* out, std::size_t n);
// The same per row, for mapped I/O: row r of `rows` × `cols` is read from in_rows[r] (null:
// zeros) or written to out_rows[r] (null: skipped); the tables and rows are read by the
// kernel when it runs.
void rows_to_bf16(StreamRef stream, const float* const* in_rows, std::uint16_t* out, std::size_t rows,
                  std::size_t cols);
void bf16_to_rows(StreamRef stream, const std::uint16_t* in, float* const* out_rows, std::size_t rows,
                  std::size_t cols);
}  // namespace streampipe::serving::detail

namespace streampipe::serving::detail {
// Deterministic non-zero bf16 values in [-scale, scale] (benchmarks never time on zeros).
void fill_bf16_pattern(StreamRef stream, std::uint16_t* out, std::size_t n, float scale, unsigned seed);
}  // namespace streampipe::serving::detail
