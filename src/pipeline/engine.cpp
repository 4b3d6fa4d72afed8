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
// An engine spans a set of devices: each has its own lanes, slots and staging pool, and a
// slot is taken from the device expected to finish it first (free_slots), so a device that
// finishes early takes more work. A sticky error takes its device out of the set; the
// slots still on it fail their items or send them to the others (engine_completion.cpp).
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

#include "engine_impl.hpp"
#include "engine_thread.hpp"

#include <fmt/format.h>

#include <memory>
#include <stdexcept>
#include <utility>

namespace streampipe::pipeline {

namespace detail {
double clock_ms() { return Timeline::now_ms(); }
}  // namespace detail

using detail::clock_ms;
using detail::describe_exception;
using ItemState = detail::ItemState;
using Slot = detail::Slot;

Engine::Impl::Impl(Operation o, EngineOptions opt) : op(std::move(o)), options(detail::checked_options(std::move(opt))) {
  open_batch = detail::BatchFill({static_cast<std::size_t>(options.batch_items), options.batch_bytes});
  nvtx_initialize();  // before any worker or lane thread opens a range
  backend = detail::resolve_backend(options, op);
  devices = detail::resolve_devices(options, backend);
  // Each device's pinned staging next to its GPU's socket (where the host has several).
  for (const int d : devices) numa_nodes.push_back(backend == Backend::gpu ? Device(d).host_numa_node() : -1);
  // Slots numbered device after device; a device's slots take its lanes in turn.
  const int per_device = options.lanes * options.depth;
  const int slot_count = per_device * static_cast<int>(devices.size());
  for (int i = 0; i < slot_count; ++i) {
    const auto member = static_cast<std::size_t>(i / per_device);
    const int lane = static_cast<int>(member) * options.lanes + (i % per_device) % options.lanes;
    slots.push_back(std::make_unique<Slot>(i, lane, member, devices[member], backend == Backend::gpu,
                                           static_cast<std::size_t>(options.batch_items), numa_nodes[member]));
  }
  free_slots = detail::FreeSlots(devices.size(), per_device);
  for (auto& s : slots) free_slots.add(*s);

  workers = std::make_unique<detail::WorkerPool>(detail::host_worker_count(options));
  // One thread's memcpy moves a fraction of what the link carries: staging copies are cut
  // into pieces spread over the workers, oldest slot first.
  copier = std::make_unique<CopyQueue>(workers->size() - 1,
                                       [this](std::function<void()> task) { workers->post(std::move(task)); });

  for (int l = 0; l < options.lanes * static_cast<int>(devices.size()); ++l) {
    const detail::LaneConfig cfg{.lane = l, .device = devices[static_cast<std::size_t>(l / options.lanes)],
                                 .slots = slot_count, .max_batch = options.batch_items,
                                 .use_graphs = options.use_graphs, .now_ms = &clock_ms};
    lanes.push_back(std::make_unique<detail::LaneQueue>(
        backend == Backend::gpu ? detail::make_gpu_lane(cfg) : detail::make_host_lane(cfg),
        [this](Slot& slot, detail::LaneExecutor& executor) { complete(slot, executor); }));
  }
  const auto wait_inputs = [this](int slot) {
    const auto& s = *slots[static_cast<std::size_t>(slot)];
    lanes[static_cast<std::size_t>(s.lane)]->executor().wait_inputs(slot);
  };
  for (std::size_t d = 0; d < devices.size(); ++d)
    staging.push_back(std::make_unique<detail::StagingPool>(backend == Backend::gpu, options.staging_bytes,
                                                            slot_count, wait_inputs, numa_nodes[d]));
}

Engine::Impl::~Impl() {
  try {
    (void)drain();
  } catch (...) {
    // A callback's exception has nowhere to go from a destructor.
  }
  for (auto& lane : lanes) lane->stop();
  workers.reset();  // joins after finishing posted tasks (there are none left)
  lanes.clear();
}

std::future<ItemResult> Engine::Impl::submit(Item item) {
  std::unique_lock lock(mutex);
  // On the engine's own thread (a callback, a host form) a wait for a slot would wait for
  // itself: the item goes in without releasing the lock, or is refused.
  while (detail::on_engine_thread(&delivery) && !stop.stopped()) {
    const std::size_t bytes = item.in.size();
    if (open_slot != nullptr && detail::batchable(open_batch.limits(), bytes, item.produce != nullptr) &&
        open_batch.fits(bytes))
      break;
    if (open_slot == nullptr && free_slots.any()) break;
    if (open_slot == nullptr)
      throw std::logic_error("submit() from an engine's own thread (an on_complete callback or a host function) "
                             "while every slot is taken: it would wait for a slot only this thread can free");
    Slot* full = std::exchange(open_slot, nullptr);
    lock.unlock();
    dispatch(*full);
    lock.lock();
  }
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
        free_slots.put_back_unused(*fresh);
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

Slot* Engine::Impl::acquire_slot(std::unique_lock<std::mutex>& lock) {
  Slot* s = nullptr;
  slot_freed.wait(lock, [&] { return stop.stopped() || (s = free_slots.take(clock_ms())) != nullptr; });
  return s;
}

bool Engine::Impl::stopped_now() noexcept {
  std::lock_guard lock(mutex);
  return stop.stopped();
}

void Engine::Impl::fail_stopped_slot(Slot& slot) noexcept {
  std::unique_lock lock(mutex);
  const auto [status, why] = stop.reason();
  lock.unlock();
  fail_slot(slot, status, why);
}

std::future<ItemResult> Engine::Impl::reject(std::unique_lock<std::mutex>& lock, std::unique_ptr<ItemState> st,
                               std::future<ItemResult>& future) {
  const auto [status, why] = stop.reason();
  lock.unlock();
  finish_unstarted(std::move(st), status, why);
  return std::move(future);
}

void Engine::Impl::flush() {
  std::unique_lock lock(mutex);
  Slot* partial = std::exchange(open_slot, nullptr);
  lock.unlock();
  if (partial != nullptr) dispatch(*partial);
}

void Engine::Impl::set_fatal(const std::string& what) {
  {
    std::lock_guard lock(mutex);
    stop.fail(what);
  }
  slot_freed.notify_all();
  for (auto& pool : staging) pool->stop();
}

RunStats Engine::Impl::drain() {
  if (detail::on_engine_thread(&delivery))
    throw std::logic_error("drain() from an engine's own thread (an on_complete callback or a host function) would "
                           "wait for itself");
  flush();
  std::unique_lock lock(mutex);
  drained.wait(lock, [&] { return outstanding == 0; });
  if (auto error = delivery.take_callback_error()) std::rethrow_exception(error);
  RunStats out = stats;
  for (const auto& pool : staging) out.staging_peak_bytes += pool->peak_bytes();
  return out;
}

void Engine::Impl::cancel() {
  Slot* partial = nullptr;
  {
    std::lock_guard lock(mutex);
    stop.cancel();
    partial = std::exchange(open_slot, nullptr);
  }
  slot_freed.notify_all();
  for (auto& pool : staging) pool->stop();
  if (partial != nullptr) fail_slot(*partial, ItemStatus::cancelled, "cancelled before it started");
}

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
const std::vector<int>& Engine::devices() const noexcept { return impl_->devices; }

std::string Engine::describe() const {
  return detail::describe_engine(impl_->options, impl_->backend, impl_->devices, impl_->workers->size());
}

}  // namespace streampipe::pipeline
