// SPDX-License-Identifier: Apache-2.0
#pragma once
// Private to src/tools: launchers for the Life kernels (life_kernels.cu). Each enqueues on
// `stream` and checks the launch. Layouts: bytes = height rows of width bytes (0/1);
// words = height rows of words_per_row 64-bit words, cell x in bit x % 64 of word x / 64,
// bits past the width always zero.

#include "streampipe/cuda/stream.hpp"

#include <cstdint>

namespace streampipe::tools::life::detail {

void step_global(StreamRef stream, const std::uint8_t* in, std::uint8_t* out, std::uint32_t width,
                 std::uint32_t height);
void step_shared(StreamRef stream, const std::uint8_t* in, std::uint8_t* out, std::uint32_t width,
                 std::uint32_t height);
void step_bitpacked(StreamRef stream, const std::uint64_t* in, std::uint64_t* out, std::uint32_t width,
                    std::uint32_t height, unsigned rows_per_thread);

void pack(StreamRef stream, const std::uint8_t* bytes, std::uint64_t* words, std::uint32_t width,
          std::uint32_t height);
void unpack(StreamRef stream, const std::uint64_t* words, std::uint8_t* bytes, std::uint32_t width,
            std::uint32_t height);
void fill_random_bytes(StreamRef stream, std::uint8_t* bytes, std::uint64_t cells, std::uint64_t seed,
                       std::uint64_t threshold);

// Adds the live cells to *count (which the caller zeroed on the stream).
void count_bytes(StreamRef stream, const std::uint8_t* bytes, std::uint64_t cells, unsigned long long* count);
void count_words(StreamRef stream, const std::uint64_t* words, std::uint64_t count_words,
                 unsigned long long* count);


}  // namespace streampipe::tools::life::detail
