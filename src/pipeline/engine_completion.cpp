// SPDX-License-Identifier: Apache-2.0
// The engine's second half: staging and enqueue, the lanes' completion, release and delivery,
// and the loss of a device (engine.cpp's opening comment has the whole path).

#include "engine_impl.hpp"

#include <fmt/format.h>

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace streampipe::pipeline {

using detail::clock_ms;
using detail::describe_exception;
using ItemState = detail::ItemState;
using Slot = detail::Slot;

void Engine::Impl::dispatch(Slot& slot) noexcept {
  bool needs_worker = false;
  try {
    slot.layout.assign(slot.items.size(), {});
    for (std::size_t k = 0; k < slot.items.size(); ++k) {
      const Item& item = slot.items[k]->item;
      auto& place = slot.layout[k];
      place.in = item.in.data();
      place.in_bytes = item.in.size();  // a produce item's, 0 until it allocates
      place.stage_in = item.produce || !detail::host_memory_is_direct(slot.host_form, place.in);
      needs_worker = needs_worker || place.stage_in;
    }
  } catch (...) {
    fail_slot(slot, ItemStatus::failed,
              "laying out its batch failed: " + describe_exception(std::current_exception()));
    return;
  }
  const std::size_t staged_bytes = detail::layout_inputs(slot.layout);
  if (staged_bytes > 0) {
    std::optional<detail::StagingPool::Lease> lease;
    try {
      lease = slot.owner->staging->acquire(staged_bytes, slot.id);
    } catch (...) {
      fail_slot(slot, ItemStatus::failed, "waiting for staging memory failed: " +
                                              describe_exception(std::current_exception()));
      return;
    }
    if (!lease) {  // stopped while waiting
      fail_stopped_slot(slot);
      return;
    }
    slot.in_stage = *lease;
  }
  if (!needs_worker) {
    enqueue(slot);
    return;
  }
  try {
    workers->post([this, &slot] { stage_in(slot); });
  } catch (...) {  // not posted: the slot is still ours alone
    fail_slot(slot, ItemStatus::failed, "handing its batch to a worker failed: " +
                                            describe_exception(std::current_exception()));
  }
}

void Engine::Impl::stage_in(Slot& slot) noexcept {
  NvtxRange range("streampipe stage in");
  const double t0 = clock_ms();
  if (stopped_now()) {
    fail_stopped_slot(slot);
    return;
  }
  try {
    const std::size_t bytes = detail::stage_inputs(slot, *slot.owner->staging, *parts);
    slot.stage_in_ms = clock_ms() - t0;
    if (options.record_timeline)
      timeline.add({Stage::stage_in, -1, slot.items.front()->index, slot.items.size(), t0, t0 + slot.stage_in_ms,
                    bytes});
  } catch (...) {
    fail_slot(slot, ItemStatus::failed,
              "staging its input failed: " + describe_exception(std::current_exception()));
    return;
  }
  enqueue(slot);
}

void Engine::Impl::enqueue(Slot& slot) noexcept {
  try {
    if (!detail::prepare_work(slot, op)) {  // every item failed already
      release_and_deliver(slot);
      return;
    }
  } catch (...) {
    detail::fail_remaining(slot, std::current_exception(), "preparing its device work failed");
    release_and_deliver(slot);
    return;
  }
  const detail::StagingPool::Lease lease = slot.in_stage;  // the slot may complete at once
  bool fenced = false;
  try {
    fenced = slot.owner->lane_queues[static_cast<std::size_t>(slot.member_lane)]->push(slot);
  } catch (...) {  // nothing was enqueued (LaneQueue::push): the slot is still ours alone
    detail::fail_remaining(slot, std::current_exception(), "queueing its device work failed");
    release_and_deliver(slot);
    return;
  }
  if (lease && fenced) slot.owner->staging->fence(lease);
}

void Engine::Impl::complete(Slot& slot, detail::LaneExecutor& executor) noexcept {
  auto& w = slot.work;
  std::exception_ptr sticky;
  try {
    executor.wait(w);
  } catch (...) {
    if (!w.error) w.error = std::current_exception();
    if (detail::is_sticky_error(std::current_exception())) sticky = std::current_exception();
  }
  // On the host backend an operation that throws a sticky CudaError stands for a lost device.
  if (!sticky && w.error && detail::is_sticky_error(w.error)) sticky = w.error;
  if (sticky) {
    const bool rerun = lose_device(slot.member, sticky);
    if (rerun) {
      run_again(slot);
      return;
    }
  }
  try {
    if (w.must_wait && options.record_timeline) detail::record_device_stages(timeline, slot);
    if (w.error) {
      const std::string on = names_members_in_errors ? fmt::format(" on {}", slot.owner->report.name) : std::string();
      const std::string what = w.error_in_operation ? fmt::format("operation '{}'{} failed", op.name, on)
                                                    : fmt::format("device work{} failed", on);
      detail::fail_remaining(slot, w.error, what);
    } else if (slot.stages_out) {
      workers->post([this, &slot] { stage_out(slot); });
      return;
    }
  } catch (...) {  // not posted: the slot is still ours alone
    detail::fail_remaining(slot, std::current_exception(), "completing its batch failed");
  }
  release_and_deliver(slot);
}

void Engine::Impl::stage_out(Slot& slot) noexcept {
  NvtxRange range("streampipe stage out");
  const double t0 = clock_ms();
  try {
    const std::size_t bytes = detail::stage_outputs(slot, *parts);
    slot.stage_out_ms = clock_ms() - t0;
    if (options.record_timeline)
      timeline.add({Stage::stage_out, -1, slot.items.front()->index, slot.items.size(), t0, t0 + slot.stage_out_ms,
                    bytes});
  } catch (...) {
    detail::fail_remaining(slot, std::current_exception(), "staging its output failed");
  }
  release_and_deliver(slot);
}

void Engine::Impl::fail_slot(Slot& slot, ItemStatus status, const std::string& why) noexcept {
  for (auto& it : slot.items)
    if (!it->failed) detail::mark_not_run(*it, status, why);  // a host stage may have failed it first
  release_and_deliver(slot);
}

void Engine::Impl::release_and_deliver(Slot& slot) noexcept {
  std::vector<std::unique_ptr<ItemState>> items = std::move(slot.items);
  slot.items.clear();
  try {
    slot.items.reserve(slot.max_items);  // the moved-out room, again: submit() must not allocate
  } catch (...) {
    // No memory even for that: the next submit allocates, and may throw, as it would anyway.
  }
  const double now = clock_ms();
  double work = 0;
  for (auto& it : items) {
    detail::record_slot_result(*it, slot, items.size(), now);
    work += it->item.work;
  }
  slot.stage_in_ms = slot.stage_out_ms = 0;
  slot.stages_out = false;
  if (slot.in_stage) slot.owner->staging->release(std::exchange(slot.in_stage, {}));
  bool cpu_measured = false;
  {
    std::lock_guard lock(mutex);
    free_slots.give_back(slot, now, slot.work.must_wait, work);
    ++slot.owner->report.batches;
    slot.owner->report.items += items.size();
    // The GPU start rule waits for the CPU's first measured batches.
    cpu_measured = gpus_starting > 0 && slot.device == kCpuDevice;
  }
  slot_freed.notify_one();
  if (cpu_measured) start_changed.notify_all();
  for (auto& it : items) delivery.deliver(std::move(it));
}

void Engine::Impl::finish_unstarted(std::unique_ptr<ItemState> st, ItemStatus status, const std::string& why) noexcept {
  detail::mark_not_run(*st, status, why);
  st->result.timing.latency_ms = clock_ms() - st->submitted_ms;
  delivery.deliver(std::move(st));
}

void Engine::Impl::handed(ItemStatus status) noexcept {
  {
    std::lock_guard lock(mutex);
    if (status == ItemStatus::done) ++stats.done;
    if (status == ItemStatus::failed) ++stats.failed;
    if (status == ItemStatus::cancelled) ++stats.cancelled;
    --outstanding;
  }
  drained.notify_all();
}

bool Engine::Impl::lose_device(std::size_t member, const std::exception_ptr& error) noexcept {
  bool none_left = false;
  {
    std::lock_guard lock(mutex);
    Member& m = *members[member];
    if (m.report.state != DeviceReport::State::lost) {
      if (m.gpu() && m.report.state == DeviceReport::State::ready) --gpus_ready;
      m.report.state = DeviceReport::State::lost;
      m.report.reason = describe_exception(error);
    }
    none_left = free_slots.lose(member) == 0;
  }
  slot_freed.notify_all();  // waiters re-choose among the devices left
  if (none_left) set_fatal(describe_exception(error));
  return options.rerun_on_device_loss && !none_left;
}

void Engine::Impl::run_again(Slot& slot) noexcept {
  std::vector<std::unique_ptr<ItemState>> again;
  std::vector<std::unique_ptr<ItemState>> kept;
  for (auto& it : slot.items) (it->failed ? kept : again).push_back(std::move(it));
  slot.items = std::move(kept);
  release_and_deliver(slot);
  for (auto& it : again) {
    std::unique_lock lock(mutex);
    Slot* fresh = acquire_slot(lock, it->gpu_only, it->item.work, detail::kind_of(it->item));
    if (fresh == nullptr) {
      const auto [status, why] = stop.reason();
      lock.unlock();
      finish_unstarted(std::move(it), status, why);
      continue;
    }
    lock.unlock();
    fresh->items.push_back(std::move(it));
    dispatch(*fresh);
  }
}

}  // namespace streampipe::pipeline
