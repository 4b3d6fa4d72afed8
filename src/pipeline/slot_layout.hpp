// SPDX-License-Identifier: Apache-2.0
#pragma once
// Where the items of one slot lie, and the copies that move them. Inputs sit back to back
// in the slot's input region, in submission order, each at a multiple of kItemAlign; the
// outputs likewise in its output region. A staged item lies in the slot's host staging at
// the same offset as on the device, so a run of staged items (padding included) is one
// copy each way: a batch of pageable items costs one copy in and one copy out. An item
// read or written in place (pinned memory, or any memory on the host backend) is a copy of
// its own. Pure: no threads, no locks; the vectors it fills keep their capacity.

#include "lane_executor.hpp"

#include <cstddef>
#include <span>

namespace streampipe::pipeline::detail {

// Every item's region starts aligned for vector access.
inline constexpr std::size_t kItemAlign = 256;

[[nodiscard]] constexpr std::size_t align_item(std::size_t bytes) noexcept {
  return (bytes + kItemAlign - 1) / kItemAlign * kItemAlign;
}

// One item of a slot as the layout sees it: the caller fills sizes, pointers and flags,
// the layout fills the offsets.
struct ItemPlacement {
  std::size_t in_bytes = 0;       // 0 until a produce stage sizes it
  std::size_t out_bytes = 0;
  const std::byte* in = nullptr;  // the caller's input, read in place unless stage_in
  std::byte* out = nullptr;       // the caller's output, written in place unless stage_out
  bool stage_in = false;          // the input is copied from the slot's staging
  bool stage_out = false;         // the output is copied back into the slot's staging
  bool skip = false;              // failed before the device phase: no output room, no copies
  std::size_t in_offset = 0;
  std::size_t out_offset = 0;
};

// Sets every item's in_offset. Returns the staging the staged inputs need: the end of the
// last staged input that has bytes, or 0.
std::size_t layout_inputs(std::span<ItemPlacement> items) noexcept;

// Sets out_offset for the items not skipped, and replaces work.descriptors (one per such
// item, in order), work.in_bytes (the input region up to the last such item, padded) and
// work.out_bytes (the output region, padded). Returns whether any such item stages its
// output. Throws std::bad_alloc.
bool layout_outputs(std::span<ItemPlacement> items, SlotWork& work);

// Replaces work.copies_in and work.copies_out with the copies of the items not skipped,
// each run of staged items coalesced into one copy, and sets work.stable_addresses (every
// host pointer lies in the slot's staging, so a captured graph may be replayed). in_stage
// and out_stage are the slot's staging blocks; either may be null when nothing is staged
// that way. A skipped item or an empty output does not break a run. Throws std::bad_alloc.
void plan_copies(std::span<const ItemPlacement> items, const std::byte* in_stage, std::byte* out_stage,
                 SlotWork& work);

}  // namespace streampipe::pipeline::detail
