// SPDX-License-Identifier: Apache-2.0
#include "slot.hpp"

#include "item_validation.hpp"

#include "streampipe/cuda/error.hpp"
#include "streampipe/cuda/pinned_buffer.hpp"

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

bool host_memory_is_direct(bool host_form, const void* p) { return host_form || is_copy_engine_direct(p); }

bool prepare_work(Slot& slot, const Operation& op) {
  auto& w = slot.work;
  w.clear();
  w.slot = slot.id;
  w.op = &op;
  for (std::size_t k = 0; k < slot.items.size(); ++k) {
    const ItemState& it = *slot.items[k];
    auto& place = slot.layout[k];
    place.skip = it.failed;
    if (it.failed) continue;
    if (!it.item.produce) place.out_bytes = it.out_bytes;  // a produce item's came with its allocation
    place.out = it.item.out.data();
    place.stage_out = it.item.consume || (place.out_bytes > 0 && !host_memory_is_direct(slot.host_form, place.out));
    w.indices.push_back(it.index);
  }
  if (w.indices.empty()) return false;
  slot.stages_out = layout_outputs(slot.layout, w);
  slot.out_stage.reserve(slot.stages_out ? w.out_bytes : 0);
  plan_copies(slot.layout, slot.in_stage.data, slot.out_stage.data(), w);
  return true;
}

bool is_sticky_error(const std::exception_ptr& e) noexcept {
  try {
    std::rethrow_exception(e);
  } catch (const CudaError& c) {
    return c.sticky();
  } catch (...) {
    return false;
  }
}

void fail_remaining(Slot& slot, std::exception_ptr e, const std::string& what) {
  for (auto& it : slot.items)
    if (!it->failed) mark_failed(*it, e, what);
}

void record_device_stages(Timeline& timeline, const Slot& slot) {
  const SlotWork& w = slot.work;
  const std::size_t first = w.indices.empty() ? 0 : w.indices.front();
  const std::size_t n = w.indices.size();
  timeline.add({Stage::h2d, slot.lane, first, n, w.h2d_start_ms, w.h2d_end_ms, w.in_bytes, slot.device});
  timeline.add({Stage::compute, slot.lane, first, n, w.h2d_end_ms, w.compute_end_ms, 0, slot.device});
  timeline.add({Stage::d2h, slot.lane, first, n, w.compute_end_ms, w.d2h_end_ms, w.out_bytes, slot.device});
}

void record_slot_result(ItemState& it, const Slot& slot, std::size_t batch_size, double now_ms) {
  const SlotWork& w = slot.work;
  auto& r = it.result;
  r.lane = slot.lane;
  r.device = w.must_wait ? slot.device : -1;
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
