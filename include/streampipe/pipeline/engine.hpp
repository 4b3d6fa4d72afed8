// SPDX-License-Identifier: Apache-2.0
#pragma once
// The pipeline engine: items go host -> device -> host on several lanes (a lane is a stream
// with its device buffers, or a thread on the host backend), overlapping both copy
// directions, the kernels, and the host staging of other items.
//
//   Engine engine(op, {.lanes = 4});
//   auto f = engine.submit(make_item(std::span(in), std::span(out)));   // blocks when full
//   engine.drain();                                  // everything delivered
//   f.get().ok();
//
// At most lanes x depth batches are in flight per device; submit() blocks until a slot
// frees (backpressure). Results arrive through futures and, optionally, a callback in
// submission order or as completed. A failing item is reported with its index and label;
// the others go on.
//
// An engine spans a device set (device_set.hpp): by default the CPU's lanes and every usable
// GPU. It works from the first moment: the CPU's lanes take work at once while each GPU
// starts on a thread of its own (its context, pools, lanes and the operation's start_device)
// and joins the set when ready; a GPU that cannot start stays out, its reason in
// device_report(). A batch goes to the member expected to finish it first, so a slow member
// takes only the work it finishes sooner. A GPU that hits a sticky CUDA error leaves the set
// and the others go on; once none is left, everything still pending and every later submit
// fails.

#include "streampipe/cuda/memory_resource.hpp"
#include "streampipe/pipeline/device_set.hpp"
#include "streampipe/pipeline/item.hpp"
#include "streampipe/pipeline/operation.hpp"
#include "streampipe/pipeline/timeline.hpp"

#include <cstddef>
#include <functional>
#include <future>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace streampipe::pipeline {

enum class Delivery { as_completed, in_order };

struct EngineOptions {
  Backend backend = Backend::automatic;  // device_set.hpp: automatic is the CPU and every usable GPU
  // The GPUs of the set, in this order (empty: every usable GPU); an index may repeat.
  std::vector<int> devices;
  bool simulate_gpus = false;  // the GPUs are simulated on host threads (tests without a GPU)
  // A GPU lost to a sticky error leaves the set, and its unfinished items fail with that
  // error; with this set they run again on the members left instead (a produce stage then
  // runs again: it must be repeatable).
  bool rerun_on_device_loss = false;
  int lanes = 4;                // per GPU
  int cpu_lanes = 0;            // the CPU's lanes (0: as `lanes`)
  int depth = 2;                // slots per lane: work in flight, and host staging running ahead
  int batch_items = 1;          // > 1: pack up to this many items into one transfer + launch
  std::size_t batch_bytes = std::size_t{16} << 20;  // ... while the packed input stays below
  Delivery delivery = Delivery::as_completed;
  std::function<void(const ItemResult&)> on_complete;  // called once per item
  int host_threads = 0;         // staging/post workers; 0: one per core it may use (at most 32)
  // Pinned staging for pageable input lent at once, per GPU (at least one batch is always
  // lent). A block goes back as soon as its copy to the device is done, so this does not
  // bound work in flight, only what the host stages ahead: small enough to stay in the CPU's
  // cache, where the staging threads write it and the DMA engine reads it. 0: one block per
  // slot (what graph replay uses, whatever is set here).
  std::size_t staging_bytes = std::size_t{48} << 20;
  bool use_graphs = false;      // replay a captured graph per slot for same-size batches
  // Where the GPUs' lanes take their device memory (their input and output regions and
  // descriptor tables), in stream order on the lane's stream; it must outlive the engine.
  // Empty: cudaMallocAsync for the regions and cudaMalloc for the tables.
  std::optional<DeviceResourceRef> device_memory;
  // Where the GPUs' host staging comes from (the input ring's blocks, each slot's output
  // staging): page-locked memory; it must outlive the engine. Empty: PinnedPool::global(),
  // on the host NUMA node nearest each GPU.
  std::optional<HostResourceRef> staging_memory;
  // Every stage of every batch is kept (about 250 bytes an unbatched item) for traces and
  // reports: turn it off for an engine that runs for long, or clear timeline() now and then.
  bool record_timeline = true;
  // How many items the run will submit, when known (0: not known), counted in units of
  // Item::work (the items themselves when each is 1). With the CPU in the set,
  // the GPUs then start only if the CPU alone would take longer than `gpu_start_ms` plus
  // twice `gpu_stop_ms` to finish them (judged from its first measured batches; until
  // measured a GPU counts as no faster than the CPU): a short run ends on the CPU without
  // paying for a GPU's start and tear-down. Near the end of a run of known length a member
  // too slow to finish one more batch before the others finish the rest takes none.
  std::size_t expected_items = 0;
  double gpu_start_ms = 500;    // what starting a GPU costs the run, for that judgement
  double gpu_stop_ms = 100;     // what a started GPU's tear-down adds to the run's end
};

struct RunStats {
  std::size_t submitted = 0;
  std::size_t done = 0;
  std::size_t failed = 0;
  std::size_t cancelled = 0;
  std::size_t staging_peak_bytes = 0;  // most input staging lent at once, since the engine began
};

// Asks for the hardware queues an engine with `options` keeps busy on a real GPU (its lanes:
// request_hardware_queues in cuda/device.hpp), and for none when its set has no real GPU.
// The engine asks as it is made; a program that calls CUDA before (counting or naming GPUs,
// resolving a device set) asks first, since the driver reads the request once. Never throws.
void request_lane_queues(const EngineOptions& options) noexcept;

class Engine {
 public:
  Engine(Operation op, EngineOptions options = {});
  ~Engine();  // cancels nothing: waits for work in flight, then stops its threads
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  // Throws std::invalid_argument for a malformed item (empty, size mismatch), naming it, and
  // what Operation::output_bytes throws for its input size; such an item is not counted and
  // never delivered. An item submit() returned a future for is resolved exactly once (its
  // callback, then its future) whatever fails later: the operation, a host stage, a CUDA
  // call, memory. A callback (or a host form) may submit, but never wait: a submit from
  // one when no slot is free throws std::logic_error (the slot could be freed only by the
  // thread that would wait for it), and so does drain(); it must not wait for a future.
  [[nodiscard]] std::future<ItemResult> submit(Item item);
  void flush();      // dispatch a partly filled batch now
  RunStats drain();  // flush and wait until every submitted item has been delivered
  // True on a thread this engine is running a callback or a host form on (any engine's
  // host form: a host lane does not know its engine), where drain() throws.
  [[nodiscard]] bool on_own_thread() const noexcept;
  void cancel();     // items not yet on the device are cancelled; later submits too
  // `more` items are about to be submitted (a map over a list, say): with the run's length
  // known, a member too slow to finish one more batch before the others finish everything
  // left takes none, so it never holds the end of the run. Never throws.
  void expect(std::size_t more);

  // Blocks until every GPU of the set has joined it, failed to start or been left out
  // (EngineOptions::expected_items); returns device_report().
  std::vector<DeviceReport> wait_until_started();

  // GPUs of the set ready now (joined, not lost): a producer may shape its items by it.
  [[nodiscard]] std::size_t gpus_ready() const noexcept;
  [[nodiscard]] const EngineOptions& options() const noexcept;
  [[nodiscard]] const DeviceSet& device_set() const noexcept;  // as resolved when it was made
  [[nodiscard]] Timeline& timeline() noexcept;
  // Each member of the set as it is now: the CPU first, then the GPUs in the set's order.
  [[nodiscard]] std::vector<DeviceReport> device_report() const;
  // Why a set that looks for its GPUs as it starts (the CPU and every GPU: backend automatic,
  // no devices named) has none in device_report(), which then has no member to say it: never
  // looked for (a run the CPU finishes sooner, no driver) or none found. Empty when GPUs were
  // found, or the set named its GPUs.
  [[nodiscard]] std::string gpus_left_out() const;
  // A line saying which devices, lanes, depth, batching and staging mode are in use.
  [[nodiscard]] std::string describe() const;

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace streampipe::pipeline
