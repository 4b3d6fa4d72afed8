// SPDX-License-Identifier: Apache-2.0
#pragma once
// Private to src/tools/life: launchers for the Life kernels (kernels.cu). Each enqueues on
// `stream` and checks the launch. Layouts: bytes = height rows of width bytes (0/1);
// words = height rows of words_per_row 64-bit words, cell x in bit x % 64 of word x / 64,
// bits past the width always zero.

#include "streampipe/cuda/device.hpp"
#include "streampipe/cuda/stream.hpp"
#include "streampipe/pipeline/item_descriptor.hpp"

#include <array>
#include <cstddef>
#include <cstdint>

namespace streampipe::tools::life::detail {

void step_global(StreamRef stream, const std::uint8_t* in, std::uint8_t* out, std::uint32_t width,
                 std::uint32_t height);
void step_shared(StreamRef stream, const std::uint8_t* in, std::uint8_t* out, std::uint32_t width,
                 std::uint32_t height);

// Warps of the bit-packed kernel the device holds at once, for 1, 2, 4 and 8 generations
// per launch.
using ResidentWarps = std::array<std::uint32_t, 4>;
[[nodiscard]] ResidentWarps bitpacked_resident_warps(const Device& device);

// `universes` boards of one size, one after another in each buffer.
struct BitpackedShape {
  std::uint32_t width = 0, height = 0, universes = 1;
  ResidentWarps resident_warps{};       // bitpacked_resident_warps(device)
  unsigned generations_per_launch = 0;  // at most this many (1, 2, 4, 8); 0: as many as the board allows
  std::uint32_t strip_rows = 0;         // rows each warp writes; 0: sized to fill the GPU once
};
// Enqueues `generations` generations of every universe: launches of up to 8 generations
// each, the first reading `a`, alternating between `a` and `b`. Returns the number of
// launches (odd: the result is in `b`). With `counts`, adds universe u's population after
// the g-th generation (from 0) to counts[g * universes + u]; the caller zeroes them.
// Throws std::invalid_argument for a shape the kernel cannot take.
std::uint64_t step_bitpacked(StreamRef stream, std::uint64_t* a, std::uint64_t* b, const BitpackedShape& shape,
                             std::uint64_t generations, unsigned long long* counts);

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

// An engine batch's populations to its items' outputs: counts[g * universes + u] (as the
// kernels log them) to the g-th uint64 from out + items[u].out_offset + at (`items` in
// device memory; `at` a multiple of 8).
void scatter_populations(StreamRef stream, const std::uint64_t* counts, std::uint32_t universes,
                         std::uint64_t generations, const pipeline::ItemDescriptor* items, std::byte* out,
                         std::size_t at);

}  // namespace streampipe::tools::life::detail
