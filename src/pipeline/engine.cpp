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

#include "streampipe/pipeline/engine.hpp"

#include "lane_executor.hpp"
#include "staging_buffer.hpp"
#include "staging_pool.hpp"
#include "worker_pool.hpp"

#include "streampipe/cuda/device.hpp"
#include "streampipe/cuda/error.hpp"
#include "streampipe/cuda/nvtx.hpp"
#include "streampipe/cuda/pinned_buffer.hpp"
#include "streampipe/pipeline/host_copy.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <thread>
#include <utility>

namespace streampipe::pipeline {

const char* backend_name(Backend b) noexcept {
  switch (b) {
    case Backend::gpu: return "gpu";
    case Backend::host: return "host";
    case Backend::automatic: break;
  }
  return "automatic";
}

namespace {

double clock_ms() {
  static const auto epoch = std::chrono::steady_clock::now();
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - epoch).count();
}

constexpr std::size_t kAlign = 256;  // keeps every item's device region aligned for vector access
std::size_t align_up(std::size_t n) { return (n + kAlign - 1) / kAlign * kAlign; }

std::string item_name(std::size_t index, const std::string& label) {
  return label.empty() ? fmt::format("item {}", index) : fmt::format("item {} ({})", index, label);
}

std::string describe_exception(const std::exception_ptr& e) {
  try {
    std::rethrow_exception(e);
  } catch (const std::exception& ex) {
    return ex.what();
  } catch (...) {
    return "unknown exception";
  }
}

struct ItemState {
  std::size_t index = 0;
  Item item;
  std::promise<ItemResult> promise;
  ItemResult result;
  double submitted_ms = 0, assigned_ms = 0;
  std::size_t in_bytes = 0, out_bytes = 0;
  std::size_t in_offset = 0, out_offset = 0;
  bool stage_in = false;   // input goes through the slot's staging buffer
  bool stage_out = false;  // output comes back through it
  bool failed = false;
};

struct Slot {
  int id = 0;
  int lane = 0;
  detail::StagingPool::Lease in_stage;  // lent from the engine's staging pool while needed
  detail::StagingBuffer out_stage;
  std::vector<std::unique_ptr<ItemState>> items;
  std::size_t in_cursor = 0;  // packed input bytes so far (batching, before dispatch)
  detail::SlotWork work;
  double stage_in_ms = 0, stage_out_ms = 0;

  Slot(int id_, int lane_, bool pinned) : id(id_), lane(lane_), out_stage(pinned) {}
};

struct Lane {
  std::unique_ptr<detail::LaneExecutor> executor;
  std::mutex mutex;  // orders enqueue + FIFO push, so the FIFO matches the stream's order
  std::condition_variable cv;
  std::deque<Slot*> fifo;
  bool stopping = false;
  std::thread completion;
};

// Adapter handed to Item::produce: a produce item is alone in its slot, so its input takes
// the slot's staging block from the start.
class SlotStagingInput final : public StagingInput {
 public:
  SlotStagingInput(Slot& slot, ItemState& item, detail::StagingPool& pool) : slot_(slot), item_(item), pool_(pool) {}
  std::span<std::byte> allocate(std::size_t in_bytes, std::size_t out_bytes) override {
    if (allocated_) throw std::logic_error("StagingInput::allocate() called twice for one item");
    if (in_bytes == 0) throw std::invalid_argument("produce() allocated an empty input");
    if (slot_.in_stage) throw std::logic_error("a produce item shares its slot's staging");
    allocated_ = true;
    item_.in_offset = 0;
    item_.in_bytes = in_bytes;
    item_.out_bytes = out_bytes;
    slot_.in_stage = pool_.acquire_now(in_bytes, slot_.id);
    slot_.in_cursor = align_up(in_bytes);
    return {slot_.in_stage.data, in_bytes};
  }
  [[nodiscard]] bool allocated() const noexcept { return allocated_; }

 private:
  Slot& slot_;
  ItemState& item_;
  detail::StagingPool& pool_;
  bool allocated_ = false;
};

}  // namespace

struct Engine::Impl {
  Operation op;
  EngineOptions options;
  Backend backend = Backend::host;
  Timeline timeline;

  std::vector<std::unique_ptr<Slot>> slots;
  std::vector<std::unique_ptr<Lane>> lanes;
  std::unique_ptr<detail::WorkerPool> workers;
  std::unique_ptr<CopyQueue> copier;
  std::unique_ptr<detail::StagingPool> staging;  // input staging blocks, lent per slot

  std::mutex mutex;  // guards everything below
  std::condition_variable slot_freed;
  std::condition_variable drained;
  std::deque<Slot*> free_slots;
  Slot* open_slot = nullptr;  // batch being filled
  std::size_t next_index = 0;
  std::size_t outstanding = 0;
  RunStats stats;
  bool cancelled = false;
  std::string fatal;  // set by a sticky CUDA error: nothing more can run on the device
  std::exception_ptr callback_error;

  std::mutex order_mutex;  // in-order delivery
  std::map<std::size_t, std::unique_ptr<ItemState>> held;
  std::size_t next_delivery = 0;

  Impl(Operation o, EngineOptions opt) : op(std::move(o)), options(std::move(opt)) {
    if (options.lanes < 1) throw std::invalid_argument("EngineOptions::lanes must be at least 1");
    if (options.depth < 1) throw std::invalid_argument("EngineOptions::depth must be at least 1");
    if (options.batch_items < 1) throw std::invalid_argument("EngineOptions::batch_items must be at least 1");
    // Graph replay needs a slot's staging at the same address every time: one block per slot.
    if (options.use_graphs) options.staging_bytes = 0;
    nvtx_initialize();  // before any worker or lane thread opens a range
    backend = options.backend;
    if (backend == Backend::automatic) backend = Device::count() > 0 ? Backend::gpu : Backend::host;
    if (backend == Backend::gpu && !op.device)
      throw std::invalid_argument(fmt::format("operation '{}' has no device form", op.name));
    if (backend == Backend::host && !op.host)
      throw std::invalid_argument(fmt::format("operation '{}' has no host form", op.name));
    if (backend == Backend::gpu) (void)Device(options.device);  // validates the index

    const int slot_count = options.lanes * options.depth;
    for (int i = 0; i < slot_count; ++i)
      slots.push_back(std::make_unique<Slot>(i, i % options.lanes, backend == Backend::gpu));
    for (auto& s : slots) free_slots.push_back(s.get());

    int threads = options.host_threads;
    if (threads <= 0) threads = static_cast<int>(std::clamp(std::thread::hardware_concurrency(), 2u, 32u));
    workers = std::make_unique<detail::WorkerPool>(threads);
    // One thread's memcpy moves a fraction of what the link carries: staging copies are cut
    // into pieces spread over the workers, oldest slot first.
    copier = std::make_unique<CopyQueue>(workers->size() - 1,
                                         [this](std::function<void()> task) { workers->post(std::move(task)); });

    for (int l = 0; l < options.lanes; ++l) {
      detail::LaneConfig cfg;
      cfg.lane = l;
      cfg.slots = slot_count;
      cfg.max_batch = options.batch_items;
      cfg.use_graphs = options.use_graphs;
      cfg.now_ms = &clock_ms;
      auto lane = std::make_unique<Lane>();
      lane->executor = backend == Backend::gpu ? detail::make_gpu_lane(options.device, cfg)
                                               : detail::make_host_lane(cfg);
      lanes.push_back(std::move(lane));
    }
    staging = std::make_unique<detail::StagingPool>(backend == Backend::gpu, options.staging_bytes, slot_count,
                                                    [this](int slot) {
                                                      const auto& s = *slots[static_cast<std::size_t>(slot)];
                                                      lanes[static_cast<std::size_t>(s.lane)]->executor->wait_inputs(slot);
                                                    });
    for (auto& lane : lanes) lane->completion = std::thread([this, l = lane.get()] { completion_loop(*l); });
  }

  ~Impl() {
    try {
      (void)drain();
    } catch (...) {
      // A callback's exception has nowhere to go from a destructor.
    }
    for (auto& lane : lanes) {
      {
        std::lock_guard lock(lane->mutex);
        lane->stopping = true;
      }
      lane->cv.notify_all();
    }
    for (auto& lane : lanes) lane->completion.join();
    workers.reset();  // joins after finishing posted tasks (there are none left)
    lanes.clear();
  }

  // ---- submission -------------------------------------------------------------------------

  void validate(const Item& item, std::size_t index) const {
    const std::string name = item_name(index, item.label);
    if (item.produce && !item.in.empty())
      throw std::invalid_argument(name + ": give either an input span or a produce stage, not both");
    if (!item.produce && item.in.empty()) throw std::invalid_argument(name + ": empty input");
    if (item.consume && !item.out.empty())
      throw std::invalid_argument(name + ": give either an output span or a consume stage, not both");
    if (item.consume && !item.produce && !op.output_bytes)
      throw std::invalid_argument(name + ": a consume stage on a span input needs Operation::output_bytes");
    if (!item.consume && !item.produce && item.out.empty() && op.output_bytes &&
        op.output_bytes(item.in.size()) != 0)
      throw std::invalid_argument(name + ": empty output");
    if (op.output_bytes && !item.produce && !item.consume) {
      const std::size_t want = op.output_bytes(item.in.size());
      if (item.out.size() != want)
        throw std::invalid_argument(fmt::format("{}: output is {} bytes but operation '{}' produces {} from {} input bytes",
                                                name, item.out.size(), op.name, want, item.in.size()));
    }
  }

  std::future<ItemResult> submit(Item item) {
    std::unique_lock lock(mutex);
    const std::size_t index = next_index;
    validate(item, index);
    auto st = std::make_unique<ItemState>();
    st->index = index;
    st->submitted_ms = clock_ms();
    st->item = std::move(item);
    st->result.index = index;
    st->result.label = st->item.label;
    auto future = st->promise.get_future();
    ++next_index;
    ++stats.submitted;
    ++outstanding;

    if (!fatal.empty() || cancelled) {
      const auto [status, why] = stop_reason();
      lock.unlock();
      finish_unstarted(std::move(st), status, why);
      return future;
    }

    const bool batchable = options.batch_items > 1 && !st->item.produce &&
                           st->item.in.size() <= options.batch_bytes;
    if (batchable) {
      // Loop because acquire_slot() and dispatch() drop the lock: another submitter may open,
      // fill or dispatch a batch meanwhile, so every decision is re-checked under the lock.
      for (;;) {
        if (open_slot != nullptr) {
          Slot& slot = *open_slot;
          const bool fits = slot.items.size() < static_cast<std::size_t>(options.batch_items) &&
                            slot.in_cursor + st->item.in.size() <= options.batch_bytes;
          if (fits) {
            st->assigned_ms = clock_ms();
            slot.in_cursor = align_up(slot.in_cursor + st->item.in.size());
            slot.items.push_back(std::move(st));
            if (slot.items.size() >= static_cast<std::size_t>(options.batch_items)) {
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
        if (fresh == nullptr) return reject_after_wait(lock, std::move(st), future);
        if (open_slot != nullptr) {  // someone opened a batch while we waited: use theirs
          free_slots.push_front(fresh);
          slot_freed.notify_one();
          continue;
        }
        open_slot = fresh;
      }
    }

    if (open_slot != nullptr) {  // keep submission order: the partial batch goes first
      Slot* partial = std::exchange(open_slot, nullptr);
      lock.unlock();
      dispatch(*partial);
      lock.lock();
    }
    Slot* slot = acquire_slot(lock);
    if (slot == nullptr) return reject_after_wait(lock, std::move(st), future);
    st->assigned_ms = clock_ms();
    slot->items.push_back(std::move(st));
    lock.unlock();
    dispatch(*slot);
    return future;
  }

  // Waits (backpressure) for a free slot; nullptr when cancelled or failed meanwhile.
  Slot* acquire_slot(std::unique_lock<std::mutex>& lock) {
    slot_freed.wait(lock, [&] { return !free_slots.empty() || cancelled || !fatal.empty(); });
    if (cancelled || !fatal.empty()) return nullptr;
    Slot* s = free_slots.front();
    free_slots.pop_front();
    s->in_cursor = 0;
    return s;
  }

  // Why nothing more may start: cancel() or a sticky device error. Under mutex.
  [[nodiscard]] std::pair<ItemStatus, std::string> stop_reason() const {
    if (cancelled) return {ItemStatus::cancelled, "cancelled before it started"};
    return {ItemStatus::failed, "the device failed earlier: " + fatal};
  }

  // Fails a slot that must not start (cancelled or failed meanwhile).
  void fail_stopped_slot(Slot& slot) {
    std::unique_lock lock(mutex);
    const auto [status, why] = stop_reason();
    lock.unlock();
    fail_slot(slot, status, why);
  }

  std::future<ItemResult> reject_after_wait(std::unique_lock<std::mutex>& lock, std::unique_ptr<ItemState> st,
                                            std::future<ItemResult>& future) {
    const auto [status, why] = stop_reason();
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


  [[nodiscard]] bool host_memory_is_direct(const void* p) const {
    // The host backend's "device" reads host memory directly; the GPU copies at full speed
    // only from page-locked memory, so anything else is staged.
    return backend == Backend::host || is_pinned(p);
  }

  // Lays out span items (produce items are laid out by their own allocate() call) and
  // sends the slot to a worker when anything must be staged, else straight to its lane.
  // Span items to be staged get their staging block here, on the submitting thread: when
  // the staging budget is lent, this is where submission waits, not a worker that could
  // be helping to copy.
  void dispatch(Slot& slot) {
    bool needs_worker = false;
    std::size_t cursor = 0, staged_end = 0;
    for (auto& it : slot.items) {
      if (it->item.produce) {
        it->stage_in = true;
      } else {
        it->in_bytes = it->item.in.size();
        it->in_offset = cursor;
        cursor = align_up(cursor + it->in_bytes);
        it->stage_in = !host_memory_is_direct(it->item.in.data());
        if (it->stage_in) staged_end = it->in_offset + it->in_bytes;
      }
      needs_worker = needs_worker || it->stage_in;
    }
    if (staged_end > 0) {
      std::optional<detail::StagingPool::Lease> lease;
      try {
        lease = staging->acquire(staged_end, slot.id);
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
    if (needs_worker) {
      workers->post([this, &slot] { stage_in(slot); });
    } else {
      enqueue(slot);
    }
  }

  void stage_in(Slot& slot) {
    NvtxRange range("streampipe stage in");
    const double t0 = clock_ms();
    bool stopped = false;
    {
      std::lock_guard lock(mutex);
      stopped = cancelled || !fatal.empty();
    }
    if (stopped) {
      fail_stopped_slot(slot);
      return;
    }
    std::size_t bytes = 0;
    slot.in_cursor = 0;
    std::vector<CopyRange> copies;
    for (auto& it : slot.items) {
      if (it->item.produce) {  // always alone in its slot: it decides its own size
        SlotStagingInput input(slot, *it, *staging);
        try {
          it->item.produce(input);
          if (!input.allocated()) throw std::logic_error("produce() did not allocate its input");
          if (!it->item.out.empty() && it->item.out.size() != it->out_bytes)
            throw std::invalid_argument(fmt::format("produce() declared {} output bytes for a {}-byte output span",
                                                    it->out_bytes, it->item.out.size()));
        } catch (...) {
          mark_failed(*it, std::current_exception(), "host stage 'produce' failed");
        }
      } else if (it->stage_in) {
        copies.push_back({slot.in_stage.data + it->in_offset, it->item.in.data(), it->in_bytes});
      }
      bytes += it->in_bytes;
    }
    copier->copy(copies, CopyQueue::Store::cached);
    slot.stage_in_ms = clock_ms() - t0;
    if (options.record_timeline)
      timeline.add({Stage::stage_in, -1, slot.items.front()->index, slot.items.size(), t0, t0 + slot.stage_in_ms, bytes});
    enqueue(slot);
  }

  void enqueue(Slot& slot) {
    auto& w = slot.work;
    w = detail::SlotWork{};
    w.slot = slot.id;
    w.op = &op;
    w.stable_addresses = true;
    std::size_t in_end = 0, out_cursor = 0;
    for (auto& it : slot.items) {
      if (it->failed) continue;
      if (!it->item.produce) it->out_bytes = it->item.consume ? op.output_bytes(it->in_bytes) : it->item.out.size();
      in_end = std::max(in_end, align_up(it->in_offset + it->in_bytes));
      it->out_offset = out_cursor;
      out_cursor = align_up(out_cursor + it->out_bytes);
      it->stage_out = it->item.consume || (it->out_bytes > 0 && !host_memory_is_direct(it->item.out.data()));
      w.descriptors.push_back({it->in_offset, it->in_bytes, it->out_offset, it->out_bytes});
      w.indices.push_back(it->index);
    }
    if (w.indices.empty()) {
      release_and_deliver(slot);
      return;
    }
    w.in_bytes = in_end;
    w.out_bytes = out_cursor;
    slot.out_stage.reserve(std::any_of(slot.items.begin(), slot.items.end(),
                                       [](auto& it) { return !it->failed && it->stage_out; })
                               ? out_cursor
                               : 0);

    // Staged items sit back to back in the slot's staging memory: one transfer covers a run
    // of them (padding included), so a batch costs one copy each way.
    bool prev_in_staged = false, prev_out_staged = false;
    for (auto& it : slot.items) {
      if (it->failed) continue;
      if (it->stage_in && prev_in_staged) {
        w.copies_in.back().bytes = it->in_offset + it->in_bytes - w.copies_in.back().offset;
      } else {
        const std::byte* src = it->stage_in ? slot.in_stage.data + it->in_offset : it->item.in.data();
        w.copies_in.push_back({src, it->in_offset, it->in_bytes});
      }
      prev_in_staged = it->stage_in;
      w.stable_addresses = w.stable_addresses && it->stage_in;
      if (it->out_bytes == 0) continue;
      if (it->stage_out && prev_out_staged) {
        w.copies_out.back().bytes = it->out_offset + it->out_bytes - w.copies_out.back().offset;
      } else {
        std::byte* dst = it->stage_out ? slot.out_stage.data() + it->out_offset : it->item.out.data();
        w.copies_out.push_back({it->out_offset, dst, it->out_bytes});
      }
      prev_out_staged = it->stage_out;
      w.stable_addresses = w.stable_addresses && it->stage_out;
    }

    Lane& lane = *lanes[static_cast<std::size_t>(slot.lane)];
    const detail::StagingPool::Lease lease = slot.in_stage;  // the slot may complete at once
    bool fenced = false;
    {
      std::lock_guard lock(lane.mutex);
      lane.executor->enqueue(w);
      fenced = w.inputs_fenced;
      lane.fifo.push_back(&slot);
    }
    lane.cv.notify_one();
    if (lease && fenced) staging->fence(lease);
  }

  // ---- completion -------------------------------------------------------------------------

  void completion_loop(Lane& lane) {
    for (;;) {
      Slot* slot = nullptr;
      {
        std::unique_lock lock(lane.mutex);
        lane.cv.wait(lock, [&] { return lane.stopping || !lane.fifo.empty(); });
        if (lane.fifo.empty()) return;
        slot = lane.fifo.front();
        lane.fifo.pop_front();
      }
      complete(*slot, *lane.executor);
    }
  }

  void complete(Slot& slot, detail::LaneExecutor& executor) {
    auto& w = slot.work;
    try {
      executor.wait(w);
    } catch (const CudaError& e) {
      if (!w.error) w.error = std::current_exception();
      if (e.sticky()) set_fatal(e.what());
    } catch (...) {
      if (!w.error) w.error = std::current_exception();
    }
    if (w.must_wait && options.record_timeline) {
      const std::size_t first = w.indices.empty() ? 0 : w.indices.front();
      const std::size_t n = w.indices.size();
      timeline.add({Stage::h2d, slot.lane, first, n, w.h2d_start_ms, w.h2d_end_ms, w.in_bytes});
      timeline.add({Stage::compute, slot.lane, first, n, w.h2d_end_ms, w.compute_end_ms, 0});
      timeline.add({Stage::d2h, slot.lane, first, n, w.compute_end_ms, w.d2h_end_ms, w.out_bytes});
    }
    if (w.error) {
      const std::string what = w.error_in_operation
                                   ? fmt::format("operation '{}' failed", op.name)
                                   : std::string("device work failed");
      for (auto& it : slot.items)
        if (!it->failed) mark_failed(*it, w.error, what);
      release_and_deliver(slot);
      return;
    }
    const bool needs_worker =
        std::any_of(slot.items.begin(), slot.items.end(), [](auto& it) { return !it->failed && it->stage_out; });
    if (needs_worker) {
      workers->post([this, &slot] { stage_out(slot); });
    } else {
      release_and_deliver(slot);
    }
  }

  void stage_out(Slot& slot) {
    NvtxRange range("streampipe stage out");
    const double t0 = clock_ms();
    std::size_t bytes = 0;
    std::vector<CopyRange> copies;
    for (auto& it : slot.items) {
      if (it->failed || !it->stage_out) continue;
      const std::span<const std::byte> out(slot.out_stage.data() + it->out_offset, it->out_bytes);
      bytes += it->out_bytes;
      if (it->item.consume) {
        try {
          it->item.consume(out);
        } catch (...) {
          mark_failed(*it, std::current_exception(), "host stage 'consume' failed");
        }
      } else {
        copies.push_back({it->item.out.data(), out.data(), out.size()});
      }
    }
    copier->copy(copies, CopyQueue::Store::streaming);
    slot.stage_out_ms = clock_ms() - t0;
    if (options.record_timeline)
      timeline.add({Stage::stage_out, -1, slot.items.front()->index, slot.items.size(), t0, t0 + slot.stage_out_ms, bytes});
    release_and_deliver(slot);
  }

  void mark_failed(ItemState& it, std::exception_ptr e, const std::string& what) {
    it.failed = true;
    it.result.status = ItemStatus::failed;
    it.result.exception = e;
    it.result.error = fmt::format("{}: {}: {}", item_name(it.index, it.item.label), what, describe_exception(e));
  }

  void fail_slot(Slot& slot, ItemStatus status, const std::string& why) {
    for (auto& it : slot.items) {
      it->failed = true;
      it->result.status = status;
      it->result.error = fmt::format("{}: {}", item_name(it->index, it->item.label), why);
    }
    release_and_deliver(slot);
  }

  // The slot goes back before delivery: a callback may submit more work and must find room.
  void release_and_deliver(Slot& slot) {
    const auto& w = slot.work;
    std::vector<std::unique_ptr<ItemState>> items = std::move(slot.items);
    slot.items.clear();
    const double now = clock_ms();
    for (auto& it : items) {
      auto& r = it->result;
      r.lane = slot.lane;
      r.batch_size = items.size();
      r.timing.queued_ms = it->assigned_ms - it->submitted_ms;
      r.timing.stage_in_ms = slot.stage_in_ms;
      r.timing.stage_out_ms = slot.stage_out_ms;
      r.timing.enqueue_ms = w.enqueue_ms;
      if (w.must_wait) {
        r.timing.h2d_ms = w.h2d_end_ms - w.h2d_start_ms;
        r.timing.compute_ms = w.compute_end_ms - w.h2d_end_ms;
        r.timing.d2h_ms = w.d2h_end_ms - w.compute_end_ms;
      }
      r.timing.latency_ms = now - it->submitted_ms;
    }
    slot.stage_in_ms = slot.stage_out_ms = 0;
    slot.in_cursor = 0;
    if (slot.in_stage) staging->release(std::exchange(slot.in_stage, {}));
    {
      std::lock_guard lock(mutex);
      free_slots.push_back(&slot);
    }
    slot_freed.notify_one();
    for (auto& it : items) deliver(std::move(it));
  }

  void finish_unstarted(std::unique_ptr<ItemState> st, ItemStatus status, const std::string& why) {
    st->failed = true;
    st->result.status = status;
    st->result.error = fmt::format("{}: {}", item_name(st->index, st->item.label), why);
    st->result.timing.latency_ms = clock_ms() - st->submitted_ms;
    deliver(std::move(st));
  }

  void deliver(std::unique_ptr<ItemState> st) {
    if (options.delivery == Delivery::in_order) {
      std::lock_guard lock(order_mutex);
      held.emplace(st->index, std::move(st));
      while (!held.empty() && held.begin()->first == next_delivery) {
        auto node = held.extract(held.begin());
        ++next_delivery;
        hand_over(*node.mapped());
      }
      return;
    }
    hand_over(*st);
  }

  void hand_over(ItemState& st) {
    if (options.on_complete) {
      try {
        options.on_complete(st.result);
      } catch (...) {
        std::lock_guard lock(mutex);
        if (!callback_error) callback_error = std::current_exception();
      }
    }
    const ItemStatus status = st.result.status;
    st.promise.set_value(std::move(st.result));
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
      if (fatal.empty()) fatal = what;
    }
    slot_freed.notify_all();
    staging->stop();
  }

  RunStats drain() {
    flush();
    std::unique_lock lock(mutex);
    drained.wait(lock, [&] { return outstanding == 0; });
    if (callback_error) std::rethrow_exception(std::exchange(callback_error, nullptr));
    RunStats out = stats;
    out.staging_peak_bytes = staging->peak_bytes();
    return out;
  }

  void cancel() {
    Slot* partial = nullptr;
    {
      std::lock_guard lock(mutex);
      cancelled = true;
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
  const auto& o = impl_->options;
  std::string where = impl_->backend == Backend::gpu
                          ? fmt::format("GPU {} ({})", o.device, Device(o.device).name())
                          : std::string("host backend (threads + memcpy)");
  const std::string staging = o.staging_bytes == 0 ? std::string("staging: a block per slot")
                                                   : fmt::format("staging up to {} MiB", o.staging_bytes >> 20);
  return fmt::format("{}: {} lanes x depth {}, batch up to {} items / {} MiB, {} host workers, {}, {}{}",
                     where, o.lanes, o.depth, o.batch_items, o.batch_bytes >> 20, impl_->workers->size(), staging,
                     o.delivery == Delivery::in_order ? "in-order delivery" : "as-completed delivery",
                     o.use_graphs ? ", graph replay" : "");
}

}  // namespace streampipe::pipeline
