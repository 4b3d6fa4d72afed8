// SPDX-License-Identifier: Apache-2.0
// The engine's orchestration, identical for both backends:
//
//   submit() --(slot free? else wait: backpressure)--> dispatch
//   dispatch --(needs staging)--> staging block (waits while the staging budget is lent)
//            --> worker: produce / copy pageable input into the pinned staging block
//            --> lane enqueue (H2D, operation, D2H; asynchronous) --> lane FIFO
//   lane completion thread: wait for the slot's last event, in enqueue order
//            --(needs staging out)--> worker: copy out / consume
//            --> release the slot, deliver each item (future, callback; in order or not)
//
// Items packed into one slot (batching) share one transfer and one launch. Every stage is
// recorded on the timeline. A staging block goes back once the lane's copies in have read
// it, or when its slot is released; a slot is released only after the device finished with
// its memory, whatever failed, so no buffer is reused while a DMA may still read it.
//
// The decisions are pure parts with tests of their own: what submit() accepts
// (item_validation), what joins the open batch (batch_fill), where items lie and which
// copies move them (slot_layout), the order of delivery (reorder_buffer), why nothing more
// may start (stop_state). This file holds the threads and locks around them; lane_queue,
// host_stages and deliverer are the lanes' FIFOs, the workers' share and the hand-over.
//
// An item is resolved exactly once, whatever fails: everything that may refuse it runs in
// submit() before it is counted, and from then on no step throws past the engine. dispatch,
// enqueue and the stages on workers and completion threads turn an exception into the
// failure of the items it concerns (the slot's, or those not failed yet), and release the
// slot unless its work is already on a lane, which then completes it. A failure while
// handling a failure (no memory even for the message) ends the process (noexcept) rather
// than leave an item that nobody will deliver.

#include "streampipe/pipeline/engine.hpp"

#include "batch_fill.hpp"
#include "deliverer.hpp"
#include "engine_options.hpp"
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

#include <fmt/format.h>

#include <chrono>
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
namespace {

double clock_ms() {
  static const auto epoch = std::chrono::steady_clock::now();
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - epoch).count();
}

using detail::describe_exception;
using detail::ItemState;
using detail::Slot;

}  // namespace

struct Engine::Impl {
  Operation op;
  EngineOptions options;
  Backend backend = Backend::host;
  Timeline timeline;

  std::vector<std::unique_ptr<Slot>> slots;
  std::vector<std::unique_ptr<detail::LaneQueue>> lanes;
  std::unique_ptr<detail::WorkerPool> workers;
  std::unique_ptr<CopyQueue> copier;
  std::unique_ptr<detail::StagingPool> staging;  // input staging blocks, lent per slot

  std::mutex mutex;  // guards everything below
  std::condition_variable slot_freed;
  std::condition_variable drained;
  std::deque<Slot*> free_slots;
  Slot* open_slot = nullptr;  // batch being filled
  detail::BatchFill open_batch{detail::BatchLimits{}};  // what open_slot holds so far
  std::size_t next_index = 0;
  std::size_t outstanding = 0;
  RunStats stats;
  detail::StopState stop;

  detail::Deliverer delivery{options.delivery, options.on_complete, [this](ItemStatus s) { handed(s); }};

  Impl(Operation o, EngineOptions opt) : op(std::move(o)), options(detail::checked_options(std::move(opt))) {
    open_batch = detail::BatchFill({static_cast<std::size_t>(options.batch_items), options.batch_bytes});
    nvtx_initialize();  // before any worker or lane thread opens a range
    backend = detail::resolve_backend(options, op);

    const int slot_count = options.lanes * options.depth;
    for (int i = 0; i < slot_count; ++i)
      slots.push_back(std::make_unique<Slot>(i, i % options.lanes, backend == Backend::gpu,
                                             static_cast<std::size_t>(options.batch_items)));
    for (auto& s : slots) free_slots.push_back(s.get());

    workers = std::make_unique<detail::WorkerPool>(detail::host_worker_count(options));
    // One thread's memcpy moves a fraction of what the link carries: staging copies are cut
    // into pieces spread over the workers, oldest slot first.
    copier = std::make_unique<CopyQueue>(workers->size() - 1,
                                         [this](std::function<void()> task) { workers->post(std::move(task)); });

    for (int l = 0; l < options.lanes; ++l) {
      const detail::LaneConfig cfg{.lane = l, .slots = slot_count, .max_batch = options.batch_items,
                                   .use_graphs = options.use_graphs, .now_ms = &clock_ms};
      lanes.push_back(std::make_unique<detail::LaneQueue>(
          backend == Backend::gpu ? detail::make_gpu_lane(options.device, cfg) : detail::make_host_lane(cfg),
          [this](Slot& slot, detail::LaneExecutor& executor) { complete(slot, executor); }));
    }
    const auto wait_inputs = [this](int slot) {
      const auto& s = *slots[static_cast<std::size_t>(slot)];
      lanes[static_cast<std::size_t>(s.lane)]->executor().wait_inputs(slot);
    };
    staging = std::make_unique<detail::StagingPool>(backend == Backend::gpu, options.staging_bytes, slot_count,
                                                    wait_inputs);
  }

  ~Impl() {
    try {
      (void)drain();
    } catch (...) {
      // A callback's exception has nowhere to go from a destructor.
    }
    for (auto& lane : lanes) lane->stop();
    workers.reset();  // joins after finishing posted tasks (there are none left)
    lanes.clear();
  }

  // ---- submission -------------------------------------------------------------------------

  std::future<ItemResult> submit(Item item) {
    std::unique_lock lock(mutex);
    const std::size_t index = next_index;
    // What may refuse the item (its shape, the operation's output_bytes, memory) runs before
    // it is counted; after that, adding it to a slot never allocates (Slot reserves).
    const std::size_t out_bytes = detail::validate_item(item, index, op);
    auto st = detail::start_item(std::move(item), index, clock_ms());
    st->out_bytes = out_bytes;
    auto future = st->promise.get_future();
    ++next_index;
    ++stats.submitted;
    ++outstanding;
    if (stop.stopped()) return reject(lock, std::move(st), future);

    const std::size_t in_bytes = st->item.in.size();
    if (detail::batchable(open_batch.limits(), in_bytes, st->item.produce != nullptr)) {
      // Loop because acquire_slot() and dispatch() drop the lock: another submitter may open,
      // fill or dispatch a batch meanwhile, so every decision is re-checked under the lock.
      for (;;) {
        if (open_slot != nullptr) {
          Slot& slot = *open_slot;
          if (open_batch.fits(in_bytes)) {
            st->assigned_ms = clock_ms();
            open_batch.add(in_bytes);
            slot.items.push_back(std::move(st));
            if (open_batch.full()) {
              open_slot = nullptr;
              lock.unlock();
              dispatch(slot);
            }
            return future;
          }
          Slot* full = std::exchange(open_slot, nullptr);
          lock.unlock();
          dispatch(*full);
          lock.lock();
          continue;
        }
        Slot* fresh = acquire_slot(lock);
        if (fresh == nullptr) return reject(lock, std::move(st), future);
        if (open_slot != nullptr) {  // someone opened a batch while we waited: use theirs
          free_slots.push_front(fresh);
          slot_freed.notify_one();
          continue;
        }
        open_slot = fresh;
        open_batch.clear();
      }
    }

    if (open_slot != nullptr) {  // keep submission order: the partial batch goes first
      Slot* partial = std::exchange(open_slot, nullptr);
      lock.unlock();
      dispatch(*partial);
      lock.lock();
    }
    Slot* slot = acquire_slot(lock);
    if (slot == nullptr) return reject(lock, std::move(st), future);
    st->assigned_ms = clock_ms();
    slot->items.push_back(std::move(st));
    lock.unlock();
    dispatch(*slot);
    return future;
  }

  // Waits (backpressure) for a free slot; nullptr when cancelled or failed meanwhile.
  Slot* acquire_slot(std::unique_lock<std::mutex>& lock) {
    slot_freed.wait(lock, [&] { return !free_slots.empty() || stop.stopped(); });
    if (stop.stopped()) return nullptr;
    Slot* s = free_slots.front();
    free_slots.pop_front();
    return s;
  }

  [[nodiscard]] bool stopped_now() noexcept {
    std::lock_guard lock(mutex);
    return stop.stopped();
  }

  // Fails a slot that must not start (cancelled or failed meanwhile).
  void fail_stopped_slot(Slot& slot) noexcept {
    std::unique_lock lock(mutex);
    const auto [status, why] = stop.reason();
    lock.unlock();
    fail_slot(slot, status, why);
  }

  // Ends an item that must not start; `lock` holds mutex and is released.
  std::future<ItemResult> reject(std::unique_lock<std::mutex>& lock, std::unique_ptr<ItemState> st,
                                 std::future<ItemResult>& future) {
    const auto [status, why] = stop.reason();
    lock.unlock();
    finish_unstarted(std::move(st), status, why);
    return std::move(future);
  }

  void flush() {
    std::unique_lock lock(mutex);
    Slot* partial = std::exchange(open_slot, nullptr);
    lock.unlock();
    if (partial != nullptr) dispatch(*partial);
  }

  // ---- staging and enqueue ----------------------------------------------------------------

  // Lays out the inputs (a produce item, alone in its slot, sizes itself later when it
  // allocates) and sends the slot to a worker when anything must be staged, else straight
  // to its lane.
  // Span items to be staged get their staging block here, on the submitting thread: when
  // the staging budget is lent, this is where submission waits, not a worker that could
  // be helping to copy.
  void dispatch(Slot& slot) noexcept {
    bool needs_worker = false;
    try {
      slot.layout.assign(slot.items.size(), {});
      for (std::size_t k = 0; k < slot.items.size(); ++k) {
        const Item& item = slot.items[k]->item;
        auto& place = slot.layout[k];
        place.in = item.in.data();
        place.in_bytes = item.in.size();  // a produce item's, 0 until it allocates
        place.stage_in = item.produce || !detail::host_memory_is_direct(backend == Backend::host, place.in);
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
        lease = staging->acquire(staged_bytes, slot.id);
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

  void stage_in(Slot& slot) noexcept {
    NvtxRange range("streampipe stage in");
    const double t0 = clock_ms();
    if (stopped_now()) {
      fail_stopped_slot(slot);
      return;
    }
    try {
      const std::size_t bytes = detail::stage_inputs(slot, *staging, *copier);
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

  void enqueue(Slot& slot) noexcept {
    try {
      if (!detail::prepare_work(slot, op, backend == Backend::host)) {  // every item failed already
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
      fenced = lanes[static_cast<std::size_t>(slot.lane)]->push(slot);
    } catch (...) {  // nothing was enqueued (LaneQueue::push): the slot is still ours alone
      detail::fail_remaining(slot, std::current_exception(), "queueing its device work failed");
      release_and_deliver(slot);
      return;
    }
    if (lease && fenced) staging->fence(lease);
  }

  // ---- completion -------------------------------------------------------------------------

  // On the lane's completion thread: the device finished with the slot's memory (or never
  // got it), so from here any failure may release the slot.
  void complete(Slot& slot, detail::LaneExecutor& executor) noexcept {
    auto& w = slot.work;
    try {
      executor.wait(w);
    } catch (const CudaError& e) {
      if (!w.error) w.error = std::current_exception();
      if (e.sticky()) set_fatal(e.what());
    } catch (...) {
      if (!w.error) w.error = std::current_exception();
    }
    try {
      if (w.must_wait && options.record_timeline) detail::record_device_stages(timeline, slot);
      if (w.error) {
        const std::string what = w.error_in_operation
                                     ? fmt::format("operation '{}' failed", op.name)
                                     : std::string("device work failed");
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

  void stage_out(Slot& slot) noexcept {
    NvtxRange range("streampipe stage out");
    const double t0 = clock_ms();
    try {
      const std::size_t bytes = detail::stage_outputs(slot, *copier);
      slot.stage_out_ms = clock_ms() - t0;
      if (options.record_timeline)
        timeline.add({Stage::stage_out, -1, slot.items.front()->index, slot.items.size(), t0, t0 + slot.stage_out_ms,
                      bytes});
    } catch (...) {
      detail::fail_remaining(slot, std::current_exception(), "staging its output failed");
    }
    release_and_deliver(slot);
  }

  void fail_slot(Slot& slot, ItemStatus status, const std::string& why) noexcept {
    for (auto& it : slot.items)
      if (!it->failed) detail::mark_not_run(*it, status, why);  // a host stage may have failed it first
    release_and_deliver(slot);
  }

  // The slot goes back before delivery: a callback may submit more work and must find room.
  void release_and_deliver(Slot& slot) noexcept {
    std::vector<std::unique_ptr<ItemState>> items = std::move(slot.items);
    slot.items.clear();
    try {
      slot.items.reserve(slot.max_items);  // the moved-out room, again: submit() must not allocate
    } catch (...) {
      // No memory even for that: the next submit allocates, and may throw, as it would anyway.
    }
    const double now = clock_ms();
    for (auto& it : items) detail::record_slot_result(*it, slot, items.size(), now);
    slot.stage_in_ms = slot.stage_out_ms = 0;
    slot.stages_out = false;
    if (slot.in_stage) staging->release(std::exchange(slot.in_stage, {}));
    {
      std::lock_guard lock(mutex);
      free_slots.push_back(&slot);
    }
    slot_freed.notify_one();
    for (auto& it : items) delivery.deliver(std::move(it));
  }

  void finish_unstarted(std::unique_ptr<ItemState> st, ItemStatus status, const std::string& why) noexcept {
    detail::mark_not_run(*st, status, why);
    st->result.timing.latency_ms = clock_ms() - st->submitted_ms;
    delivery.deliver(std::move(st));
  }

  // Counts an item handed over to its caller.
  void handed(ItemStatus status) noexcept {
    {
      std::lock_guard lock(mutex);
      if (status == ItemStatus::done) ++stats.done;
      if (status == ItemStatus::failed) ++stats.failed;
      if (status == ItemStatus::cancelled) ++stats.cancelled;
      --outstanding;
    }
    drained.notify_all();
  }

  // ---- control ----------------------------------------------------------------------------

  void set_fatal(const std::string& what) {
    {
      std::lock_guard lock(mutex);
      stop.fail(what);
    }
    slot_freed.notify_all();
    staging->stop();
  }

  RunStats drain() {
    flush();
    std::unique_lock lock(mutex);
    drained.wait(lock, [&] { return outstanding == 0; });
    if (auto error = delivery.take_callback_error()) std::rethrow_exception(error);
    RunStats out = stats;
    out.staging_peak_bytes = staging->peak_bytes();
    return out;
  }

  void cancel() {
    Slot* partial = nullptr;
    {
      std::lock_guard lock(mutex);
      stop.cancel();
      partial = std::exchange(open_slot, nullptr);
    }
    slot_freed.notify_all();
    staging->stop();
    if (partial != nullptr) fail_slot(*partial, ItemStatus::cancelled, "cancelled before it started");
  }
};

Engine::Engine(Operation op, EngineOptions options)
    : impl_(std::make_unique<Impl>(std::move(op), std::move(options))) {}
Engine::~Engine() = default;
std::future<ItemResult> Engine::submit(Item item) { return impl_->submit(std::move(item)); }
void Engine::flush() { impl_->flush(); }
RunStats Engine::drain() { return impl_->drain(); }
void Engine::cancel() { impl_->cancel(); }
Backend Engine::backend() const noexcept { return impl_->backend; }
const EngineOptions& Engine::options() const noexcept { return impl_->options; }
Timeline& Engine::timeline() noexcept { return impl_->timeline; }

std::string Engine::describe() const {
  return detail::describe_engine(impl_->options, impl_->backend, impl_->workers->size());
}

}  // namespace streampipe::pipeline
