// SPDX-License-Identifier: Apache-2.0
#pragma once
// The engine's state and steps, shared by its two halves: engine.cpp (set-up, submission and
// control) and engine_completion.cpp (staging, the lanes' completion, delivery and the loss
// of a device). engine.cpp's opening comment is the map of how an item moves.

#include "streampipe/pipeline/engine.hpp"

#include "batch_fill.hpp"
#include "deliverer.hpp"
#include "engine_options.hpp"
#include "free_slots.hpp"
#include "host_stages.hpp"
#include "item_validation.hpp"
#include "lane_executor.hpp"
#include "lane_queue.hpp"
#include "slot.hpp"
#include "slot_layout.hpp"
#include "staging_pool.hpp"
#include "stop_state.hpp"
#include "worker_pool.hpp"

#include "streampipe/cuda/error.hpp"
#include "streampipe/cuda/nvtx.hpp"
#include "streampipe/cuda/pinned_buffer.hpp"
#include "streampipe/pipeline/host_copy.hpp"

#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace streampipe::pipeline {
namespace detail {
// Timeline::now_ms: the one clock of the timeline and the item timings.
[[nodiscard]] double clock_ms();
}  // namespace detail

struct Engine::Impl {
  using ItemState = detail::ItemState;
  using Slot = detail::Slot;

  Operation op;
  EngineOptions options;
  Backend backend = Backend::host;
  std::vector<int> devices;  // the set, as resolved; a lost device stays listed
  std::vector<int> numa_nodes;  // per device: the host node nearest it, -1 unknown
  Timeline timeline;

  std::vector<std::unique_ptr<Slot>> slots;
  std::vector<std::unique_ptr<detail::LaneQueue>> lanes;
  std::unique_ptr<detail::WorkerPool> workers;
  std::unique_ptr<CopyQueue> copier;
  // Input staging blocks, lent per slot: a pool per device, so that each device's DMA reads
  // blocks of its own.
  std::vector<std::unique_ptr<detail::StagingPool>> staging;

  std::mutex mutex;  // guards everything below
  std::condition_variable slot_freed;
  std::condition_variable drained;
  detail::FreeSlots free_slots{0, 1};
  Slot* open_slot = nullptr;  // batch being filled
  detail::BatchFill open_batch{detail::BatchLimits{}};  // what open_slot holds so far
  std::size_t next_index = 0;
  std::size_t outstanding = 0;
  RunStats stats;
  detail::StopState stop;

  detail::Deliverer delivery{options.delivery, options.on_complete, [this](ItemStatus s) { handed(s); }};

  Impl(Operation o, EngineOptions opt);
  ~Impl();

  // ---- submission -------------------------------------------------------------------------

  std::future<ItemResult> submit(Item item);

  // Waits (backpressure) for a free slot on a device left in the set, and takes one of the
  // device expected to finish first; nullptr when cancelled or failed meanwhile.
  Slot* acquire_slot(std::unique_lock<std::mutex>& lock);
  [[nodiscard]] bool stopped_now() noexcept;

  // Fails a slot that must not start (cancelled or failed meanwhile).
  void fail_stopped_slot(Slot& slot) noexcept;

  // Ends an item that must not start; `lock` holds mutex and is released.
  std::future<ItemResult> reject(std::unique_lock<std::mutex>& lock, std::unique_ptr<ItemState> st,
                                 std::future<ItemResult>& future);
  void flush();

  // ---- staging and enqueue ----------------------------------------------------------------

  // Lays out the inputs (a produce item, alone in its slot, sizes itself later when it
  // allocates) and sends the slot to a worker when anything must be staged, else straight
  // to its lane.
  // Span items to be staged get their staging block here, on the submitting thread: when
  // the staging budget is lent, this is where submission waits, not a worker that could
  // be helping to copy.
  void dispatch(Slot& slot) noexcept;
  void stage_in(Slot& slot) noexcept;
  void enqueue(Slot& slot) noexcept;

  // ---- completion -------------------------------------------------------------------------

  // On the lane's completion thread: the device finished with the slot's memory (or never
  // got it), so from here any failure may release the slot.
  void complete(Slot& slot, detail::LaneExecutor& executor) noexcept;
  void stage_out(Slot& slot) noexcept;
  void fail_slot(Slot& slot, ItemStatus status, const std::string& why) noexcept;

  // The slot goes back before delivery: a callback may submit more work and must find room.
  void release_and_deliver(Slot& slot) noexcept;
  void finish_unstarted(std::unique_ptr<ItemState> st, ItemStatus status, const std::string& why) noexcept;

  // Counts an item handed over to its caller.
  void handed(ItemStatus status) noexcept;

  // ---- devices ----------------------------------------------------------------------------

  [[nodiscard]] std::string device_name(int device) const;

  // Takes the device of a sticky error out of the set (once); when none is left, nothing
  // more may start. Returns whether the slot's items are to run again elsewhere.
  bool lose_device(std::size_t member, const std::exception_ptr& error) noexcept;

  // The slot ran on a lost device: its items that have not failed go to the devices left,
  // each through a slot of its own (waiting for one, as submit() does), in index order.
  void run_again(Slot& slot) noexcept;

  // ---- control ----------------------------------------------------------------------------

  void set_fatal(const std::string& what);
  RunStats drain();
  void cancel();
};

}  // namespace streampipe::pipeline
