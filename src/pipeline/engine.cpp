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

#include "streampipe/cuda/device.hpp"
#include "streampipe/cuda/pinned_buffer.hpp"

#include <fmt/format.h>

#include <algorithm>
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
  request_lane_queues(options);  // before resolving the set starts CUDA
  try {
    set = DeviceSet::resolve(options.backend, options.devices, options.simulate_gpus, static_cast<bool>(op.host),
                             static_cast<bool>(op.device));
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(fmt::format("operation '{}': {}", op.name, e.what()));
  } catch (const std::out_of_range& e) {
    throw std::out_of_range(fmt::format("operation '{}': {}", op.name, e.what()));
  }
  workers = std::make_unique<detail::WorkerPool>(detail::host_worker_count(options));
  // One thread's memcpy moves a fraction of what the link carries: staging copies are cut
  // into pieces spread over the workers, oldest slot first; so are host stages' own parts.
  parts = std::make_unique<PartQueue>(workers->size() - 1,
                                       [this](std::function<void()> task) { workers->post(std::move(task)); });
  names_members_in_errors = (set.cpu ? 1u : 0u) + set.gpus.size() > 1 || set.find_gpus;
  cpu_beside_gpus = set.cpu && !set.simulated && (set.find_gpus || !set.gpus.empty());
  members.reserve(1 + set.gpus.size());
  if (set.cpu) {
    Member& cpu = add_member(kCpuDevice, false, options.cpu_lanes > 0 ? options.cpu_lanes : options.lanes);
    detail::build_member(cpu, member_build());
    cpu.report.state = DeviceReport::State::ready;
    cpu.report.joined_ms = clock_ms();
    free_slots.join(cpu.position, cpu.slots);
  }
  // Named GPUs are members from the start (starting); found ones once the search ends.
  for (const int d : set.gpus) add_member(d, set.simulated, options.lanes);
  gpus_starting = set.gpus.size() + (set.find_gpus ? 1 : 0);
  judging_gpu_start = gpus_starting > 0;
  if (gpus_starting > 0) gpu_starter = std::jthread([this](const std::stop_token& st) { start_gpus(st); });
}

Engine::Impl::~Impl() {
  try {
    (void)drain();
  } catch (...) {
    // A callback's exception has nowhere to go from a destructor.
  }
  if (gpu_starter.joinable()) {
    gpu_starter.request_stop();
    start_changed.notify_all();
    gpu_starter.join();
  }
  for (auto& m : members) detail::stop_member(*m);
  workers.reset();  // joins after finishing posted tasks (there are none left)
  detail::release_members(members);
}

bool Engine::Impl::in_gpu_memory(const Item& item) const {
  if (!cpu_beside_gpus) return false;
  if (item.device_memory) return true;
  // Device memory comes from a process in which CUDA has started; before streampipe starts
  // it, asking would start it here, on the submitting thread.
  if (!cuda_started()) return false;
  const auto on_gpu = [](const void* p) { return p != nullptr && memory_place(p).kind == MemoryKind::device; };
  return on_gpu(item.in.data()) || on_gpu(item.out.data());
}

std::future<ItemResult> Engine::Impl::submit(Item item) {
  const bool gpu_only = in_gpu_memory(item);
  std::unique_lock lock(mutex);
  // On the engine's own thread (a callback, a host form) a wait for a slot would wait for
  // itself: the item goes in without releasing the lock, or is refused.
  while (detail::on_engine_thread(&delivery) && !stop.stopped()) {
    const std::size_t bytes = item.in.size();
    if (open_slot != nullptr && detail::batchable(open_batch.limits(), bytes, item.produce != nullptr) &&
        open_batch.fits(bytes) && !(gpu_only && open_slot->host_form))
      break;
    if (open_slot == nullptr && free_slots.any(gpu_only, remaining_work(item.work), batch_work_estimate(item.work),
                                               detail::kind_of(item)))
      break;
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
  st->gpu_only = gpu_only;
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
        if (open_batch.fits(in_bytes) && !(gpu_only && slot.host_form)) {
          st->assigned_ms = clock_ms();
          work_taken += st->item.work;
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
      Slot* fresh = acquire_slot(lock, gpu_only, batch_work_estimate(st->item.work), detail::kind_of(st->item));
      if (fresh == nullptr) return reject(lock, std::move(st), future);
      if (open_slot != nullptr) {  // someone opened a batch while we waited: use theirs
        free_slots.put_back_unused(*fresh);
        --batches_taken;
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
  Slot* slot = acquire_slot(lock, gpu_only, st->item.work, detail::kind_of(st->item));
  if (slot == nullptr) return reject(lock, std::move(st), future);
  st->assigned_ms = clock_ms();
  work_taken += st->item.work;
  slot->items.push_back(std::move(st));
  lock.unlock();
  dispatch(*slot);
  return future;
}

std::optional<double> Engine::Impl::remaining_work(double work) const {
  if (expected <= 0) return std::nullopt;  // the run's length is not known
  return std::max(0.0, expected - work_taken - work);
}

double Engine::Impl::batch_work_estimate(double first_item_work) const {
  if (open_batch.limits().items <= 1 || batches_taken == 0) return first_item_work;
  return work_taken / static_cast<double>(batches_taken);
}

Slot* Engine::Impl::acquire_slot(std::unique_lock<std::mutex>& lock, bool gpu_only, double work, std::size_t kind) {
  Slot* s = nullptr;
  slot_freed.wait(lock, [&] {
    return stop.stopped() || (s = free_slots.take(clock_ms(), gpu_only, remaining_work(work), work, kind)) != nullptr;
  });
  if (s != nullptr) ++batches_taken;
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
  start_changed.notify_all();
  stop_staging();
}

RunStats Engine::Impl::drain() {
  if (detail::on_engine_thread(&delivery))
    throw std::logic_error("drain() from an engine's own thread (an on_complete callback or a host function) would "
                           "wait for itself");
  flush();
  std::unique_lock lock(mutex);
  drained.wait(lock, [&] { return outstanding == 0; });
  if (judging_gpu_start && options.expected_items > 0 && work_taken >= static_cast<double>(options.expected_items)) {
    start_changed.notify_all();
    start_changed.wait(lock, [&] { return !judging_gpu_start; });
  }
  if (auto error = delivery.take_callback_error()) std::rethrow_exception(error);
  RunStats out = stats;
  // A member still starting is its start thread's alone (its staging may be being made); the
  // others' were made before their state left `starting`, under this lock.
  for (const auto& m : members)
    if (m->report.state != DeviceReport::State::starting && m->staging)
      out.staging_peak_bytes += m->staging->peak_bytes();
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
  stop_staging();
  if (partial != nullptr) fail_slot(*partial, ItemStatus::cancelled, "cancelled before it started");
}

Engine::Engine(Operation op, EngineOptions options)
    : impl_(std::make_unique<Impl>(std::move(op), std::move(options))) {}
Engine::~Engine() = default;
std::future<ItemResult> Engine::submit(Item item) { return impl_->submit(std::move(item)); }
void Engine::flush() { impl_->flush(); }
RunStats Engine::drain() { return impl_->drain(); }
void Engine::expect(std::size_t more) {
  const std::lock_guard lock(impl_->mutex);
  impl_->expected = std::max(impl_->expected, impl_->work_taken) + static_cast<double>(more);
}
void Engine::cancel() { impl_->cancel(); }
std::size_t Engine::gpus_ready() const noexcept { return impl_->gpus_ready.load(std::memory_order_relaxed); }
const EngineOptions& Engine::options() const noexcept { return impl_->options; }
const DeviceSet& Engine::device_set() const noexcept { return impl_->set; }
Timeline& Engine::timeline() noexcept { return impl_->timeline; }
std::vector<DeviceReport> Engine::device_report() const { return impl_->reports(); }
std::string Engine::gpus_left_out() const {
  const std::lock_guard lock(impl_->mutex);
  return impl_->gpus_left_out;
}

std::vector<DeviceReport> Engine::wait_until_started() {
  {
    std::unique_lock lock(impl_->mutex);
    impl_->start_changed.wait(lock, [&] { return impl_->gpus_starting == 0; });
  }
  return impl_->reports();
}

std::string Engine::describe() const {
  return detail::describe_engine(impl_->options, impl_->reports(), impl_->workers->size());
}

}  // namespace streampipe::pipeline
