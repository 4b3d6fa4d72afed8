// SPDX-License-Identifier: Apache-2.0
#include "slot_layout.hpp"

#include <algorithm>

namespace streampipe::pipeline::detail {

std::size_t layout_inputs(std::span<ItemPlacement> items) noexcept {
  std::size_t cursor = 0, staged_end = 0;
  for (auto& it : items) {
    it.in_offset = cursor;
    cursor = align_item(cursor + it.in_bytes);
    if (it.stage_in && it.in_bytes > 0) staged_end = it.in_offset + it.in_bytes;
  }
  return staged_end;
}

bool layout_outputs(std::span<ItemPlacement> items, SlotWork& work) {
  work.descriptors.clear();
  std::size_t in_end = 0, out_cursor = 0;
  bool stages_out = false;
  for (auto& it : items) {
    if (it.skip) continue;
    in_end = std::max(in_end, align_item(it.in_offset + it.in_bytes));
    it.out_offset = out_cursor;
    out_cursor = align_item(out_cursor + it.out_bytes);
    stages_out = stages_out || it.stage_out;
    work.descriptors.push_back({it.in_offset, it.in_bytes, it.out_offset, it.out_bytes});
  }
  work.in_bytes = in_end;
  work.out_bytes = out_cursor;
  return stages_out;
}

void plan_copies(std::span<const ItemPlacement> items, const std::byte* in_stage, std::byte* out_stage,
                 SlotWork& work) {
  work.copies_in.clear();
  work.copies_out.clear();
  work.stable_addresses = true;
  bool prev_in_staged = false, prev_out_staged = false;
  for (const auto& it : items) {
    if (it.skip) continue;
    // Staging mirrors the device region, so a staged item following a staged one extends
    // its copy, over the padding between them.
    if (it.stage_in && prev_in_staged) {
      work.copies_in.back().bytes = it.in_offset + it.in_bytes - work.copies_in.back().offset;
    } else {
      const std::byte* src = it.stage_in ? in_stage + it.in_offset : it.in;
      work.copies_in.push_back({src, it.in_offset, it.in_bytes});
    }
    prev_in_staged = it.stage_in;
    work.stable_addresses = work.stable_addresses && it.stage_in;
    if (it.out_bytes == 0) continue;
    if (it.stage_out && prev_out_staged) {
      work.copies_out.back().bytes = it.out_offset + it.out_bytes - work.copies_out.back().offset;
    } else {
      std::byte* dst = it.stage_out ? out_stage + it.out_offset : it.out;
      work.copies_out.push_back({it.out_offset, dst, it.out_bytes});
    }
    prev_out_staged = it.stage_out;
    work.stable_addresses = work.stable_addresses && it.stage_out;
  }
}

}  // namespace streampipe::pipeline::detail
