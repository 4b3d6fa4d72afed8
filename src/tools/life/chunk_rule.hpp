// SPDX-License-Identifier: Apache-2.0
#pragma once
// Private to src/tools/life: how many generations each chunk of a run steps (run.cpp). A
// chunk costs the same however long it is (every universe's state to its device and back,
// and a wait for the last one), so chunks should be long; but a stop is taken only between
// chunks, and a chunk's populations are held until it ends, so not too long. The first
// chunk is short, to measure; each next one is sized from the time per generation the last
// one stepped, to step about `target_ms`; every chunk is cut to the generations left and to
// where the caller wants to see a board. Pure.

#include "streampipe/pipeline/item.hpp"

#include <cstddef>
#include <cstdint>
#include <span>

namespace streampipe::tools::life::detail {

struct ChunkRule {
  std::uint64_t first = 16;    // the first chunk: measured, not guessed
  double target_ms = 500;      // what each later chunk aims to take
  std::uint64_t most = 65536;  // never more (the populations held per universe)
};

// A chunk as it ran: its generations and the time it stepped them. No chunk yet: 0
// generations.
struct ChunkTime {
  std::uint64_t generations = 0;
  double ms = 0;
};

// The next chunk's generations, from 1 to `left` (0 when `left` is): rule.first before any
// chunk has run; then target_ms at the last chunk's time per generation (rule.most for a
// chunk too quick to time, or timed as 0 or NaN); never more than rule.most, nor than `until_board` (the
// generations to the next board the caller sees; 0: none is due).
[[nodiscard]] std::uint64_t next_chunk(const ChunkRule& rule, const ChunkTime& last, std::uint64_t left,
                                       std::uint64_t until_board) noexcept;

// The time a chunk's items stepped, from their results: each lane ran its batches one after
// another (an item counts its share of its batch's compute time, which every item of the
// batch reports), and lanes ran side by side, so the longest lane's. The copies to and from
// the device, and the waits around them, are not stepping. 0 when no item says. Throws
// std::bad_alloc.
[[nodiscard]] double stepping_ms(std::span<const pipeline::ItemResult> items);

// The most generations a chunk of `universes` universes may step: their populations, 8 bytes
// a generation each, held at once within a fixed budget, and never over 65536.
[[nodiscard]] std::uint64_t most_generations(std::size_t universes) noexcept;

}  // namespace streampipe::tools::life::detail
