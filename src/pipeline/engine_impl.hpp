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
#include "gpu_start_rule.hpp"
#include "lane_executor.hpp"
#include "lane_queue.hpp"
#include "member.hpp"
#include "slot.hpp"
#include "slot_layout.hpp"
#include "staging_pool.hpp"
#include "stop_state.hpp"
#include "worker_pool.hpp"

#include "streampipe/cuda/error.hpp"
#include "streampipe/cuda/nvtx.hpp"
#include "streampipe/cuda/pinned_buffer.hpp"
#include "streampipe/pipeline/host_copy.hpp"

#include <atomic>
#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <stop_token>
#include <string>
#include <thread>
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
  using Member = detail::Member;

  Operation op;
  EngineOptions options;
  DeviceSet set;
  Timeline timeline;

  std::unique_ptr<detail::WorkerPool> workers;
  std::unique_ptr<PartQueue> parts;

  std::mutex mutex;  // guards everything below
  std::condition_variable slot_freed;
  std::condition_variable drained;
  std::condition_variable start_changed;  // a GPU joined or failed; the CPU was measured; stop
  // The members, the CPU first; a member's position is its index. Pointers stay valid: a
  // slot or lane refers to its member by pointer, without the lock.
  std::vector<std::unique_ptr<Member>> members;
  int lanes_numbered = 0;  // engine-wide lane numbers given out so far
  detail::FreeSlots free_slots;
  Slot* open_slot = nullptr;  // batch being filled
  detail::BatchFill open_batch{detail::BatchLimits{}};  // what open_slot holds so far
  std::size_t next_index = 0;
  std::size_t outstanding = 0;
  std::size_t batches_taken = 0;  // handed to slots
  double work_taken = 0;         // the Item::work of the items handed to slots
  // Work the run will have submitted in all, when known (EngineOptions::expected_items,
  // Engine::expect): the horizon beyond which a slow member would hold the run.
  double expected = static_cast<double>(options.expected_items);
  std::size_t gpus_starting = 0;  // GPUs (or the search for them) not joined or failed yet
  std::string gpus_left_out;      // Engine::gpus_left_out
  // The GPU starter is weighing whether to start its next GPU (not starting one): once every
  // item of a run of known length is taken it decides at once, and drain() waits for that so
  // the reports it leaves say "not started" with the reason, not "starting".
  bool judging_gpu_start = false;
  std::atomic<std::size_t> gpus_ready{0};  // real GPUs joined and not lost
  RunStats stats;
  detail::StopState stop;
  // Errors say which member an item ran on when the set may hold more than one.
  bool names_members_in_errors = false;
  bool cpu_beside_gpus = false;  // the CPU and real GPUs: items in GPU memory must avoid the CPU

  detail::Deliverer delivery{options.delivery, options.on_complete, [this](ItemStatus s) { handed(s); }};

  // Starts the GPUs (finds them, waits for the GPU start rule, starts each on a thread of
  // its own); stopped and joined first thing in the destructor.
  std::jthread gpu_starter;

  Impl(Operation o, EngineOptions opt);
  ~Impl();

  // ---- the device set ---------------------------------------------------------------------

  // Adds a member at the next position (under `mutex`, or before any thread shares the set).
  Member& add_member(int device, bool simulated, int lanes);
  [[nodiscard]] detail::MemberBuild member_build();
  // The GPU start thread's work: the rule, the search, each GPU on its own thread.
  void start_gpus(const std::stop_token& stop_token) noexcept;
  // One GPU: its lanes and staging, the operation's start_device, then it joins the set;
  // or it stays out with its reason.
  void start_gpu(Member& m, const std::stop_token& stop_token) noexcept;
  [[nodiscard]] detail::GpuStartFacts gpu_start_facts() const;  // under mutex
  [[nodiscard]] std::string member_name(const Member& m) const;

  // ---- submission -------------------------------------------------------------------------

  std::future<ItemResult> submit(Item item);

  // Waits (backpressure) for a free slot on a device left in the set, and takes one of the
  // device expected to finish a batch of `work` units first (`gpu_only`: among the GPUs);
  // nullptr when cancelled or failed meanwhile.
  Slot* acquire_slot(std::unique_lock<std::mutex>& lock, bool gpu_only, double work, std::size_t kind);
  // Work the run will still submit after a batch of `work` units being placed, when its
  // length is known.
  [[nodiscard]] std::optional<double> remaining_work(double work) const;  // under mutex
  // What a batch about to be filled will hold: the work of the batches so far, on average.
  [[nodiscard]] double batch_work_estimate(double first_item_work) const;  // under mutex
  // Whether the item's memory is on a GPU, so that the CPU's lanes must not take it.
  [[nodiscard]] bool in_gpu_memory(const Item& item) const;
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

  // ---- losing a device --------------------------------------------------------------------

  // Takes the member of a sticky error out of the set (once); when none is left, nothing
  // more may start. Returns whether the slot's items are to run again elsewhere.
  bool lose_device(std::size_t member, const std::exception_ptr& error) noexcept;

  // The slot ran on a lost device: its items that have not failed go to the devices left,
  // each through a slot of its own (waiting for one, as submit() does), in index order.
  void run_again(Slot& slot) noexcept;

  // ---- control ----------------------------------------------------------------------------

  void set_fatal(const std::string& what);
  void stop_staging();  // wakes and ends every wait for staging (cancelled or failed)
  RunStats drain();
  void cancel();
  std::vector<DeviceReport> reports();
};

}  // namespace streampipe::pipeline
