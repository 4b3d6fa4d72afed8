// SPDX-License-Identifier: Apache-2.0
#include "slot.hpp"

#include "item_validation.hpp"

#include <fmt/format.h>

#include <utility>

namespace streampipe::pipeline::detail {

std::unique_ptr<ItemState> start_item(Item item, std::size_t index, double now_ms) {
  auto st = std::make_unique<ItemState>();
  st->index = index;
  st->submitted_ms = now_ms;
  st->item = std::move(item);
  st->result.index = index;
  st->result.label = st->item.label;
  return st;
}

void mark_failed(ItemState& it, std::exception_ptr e, const std::string& what) {
  it.failed = true;
  it.result.status = ItemStatus::failed;
  it.result.exception = e;
  it.result.error = fmt::format("{}: {}: {}", item_name(it.index, it.item.label), what, describe_exception(e));
}

void mark_not_run(ItemState& it, ItemStatus status, const std::string& why) {
  it.failed = true;
  it.result.status = status;
  it.result.error = fmt::format("{}: {}", item_name(it.index, it.item.label), why);
}

void record_device_stages(Timeline& timeline, const Slot& slot) {
  const SlotWork& w = slot.work;
  const std::size_t first = w.indices.empty() ? 0 : w.indices.front();
  const std::size_t n = w.indices.size();
  timeline.add({Stage::h2d, slot.lane, first, n, w.h2d_start_ms, w.h2d_end_ms, w.in_bytes});
  timeline.add({Stage::compute, slot.lane, first, n, w.h2d_end_ms, w.compute_end_ms, 0});
  timeline.add({Stage::d2h, slot.lane, first, n, w.compute_end_ms, w.d2h_end_ms, w.out_bytes});
}

void record_slot_result(ItemState& it, const Slot& slot, std::size_t batch_size, double now_ms) {
  const SlotWork& w = slot.work;
  auto& r = it.result;
  r.lane = slot.lane;
  r.batch_size = batch_size;
  r.timing.queued_ms = it.assigned_ms - it.submitted_ms;
  r.timing.stage_in_ms = slot.stage_in_ms;
  r.timing.stage_out_ms = slot.stage_out_ms;
  r.timing.enqueue_ms = w.enqueue_ms;
  if (w.must_wait) {
    r.timing.h2d_ms = w.h2d_end_ms - w.h2d_start_ms;
    r.timing.compute_ms = w.compute_end_ms - w.h2d_end_ms;
    r.timing.d2h_ms = w.d2h_end_ms - w.compute_end_ms;
  }
  r.timing.latency_ms = now_ms - it.submitted_ms;
}

}  // namespace streampipe::pipeline::detail
