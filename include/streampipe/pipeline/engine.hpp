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
// At most lanes x depth batches are in flight; submit() blocks until a slot frees
// (backpressure). Results arrive through futures and, optionally, a callback in submission
// order or as completed. A failing item is reported with its index and label; the others go
// on. An engine spans a set of devices (every usable GPU by default), each with its own
// lanes and pinned staging; a batch goes to the device expected to finish it first. A
// device that hits a sticky CUDA error leaves the set and the others go on; once none is
// left, everything still pending and every later submit fails.

#include "streampipe/pipeline/item.hpp"
#include "streampipe/pipeline/operation.hpp"
#include "streampipe/pipeline/timeline.hpp"

#include <cstddef>
#include <functional>
#include <future>
#include <memory>
#include <string>
#include <vector>

namespace streampipe::pipeline {

enum class Backend { automatic, gpu, host };
enum class Delivery { as_completed, in_order };

[[nodiscard]] const char* backend_name(Backend b) noexcept;

struct EngineOptions {
  Backend backend = Backend::automatic;  // automatic: GPU when one is usable, else host
  // GPU backend: the CUDA devices of the set, in this order (empty: every usable GPU). Host
  // backend: simulated devices, labels only (empty: one, device 0), so that spreading,
  // stealing and the loss of a device are tested without a GPU. An index may repeat.
  std::vector<int> devices;
  // A device lost to a sticky error leaves the set, and its unfinished items fail with that
  // error; with this set they run again on the devices left instead (a produce stage then
  // runs again: it must be repeatable).
  bool rerun_on_device_loss = false;
  int lanes = 4;                // per device
  int depth = 2;                // slots per lane: work in flight, and host staging running ahead
  int batch_items = 1;          // > 1: pack up to this many items into one transfer + launch
  std::size_t batch_bytes = std::size_t{16} << 20;  // ... while the packed input stays below
  Delivery delivery = Delivery::as_completed;
  std::function<void(const ItemResult&)> on_complete;  // called once per item
  int host_threads = 0;         // staging/post workers; 0: one per core it may use (at most 32)
  // Pinned staging for pageable input lent at once (at least one batch is always lent). A
  // block goes back as soon as its copy to the device is done, so this does not bound work
  // in flight, only what the host stages ahead: small enough to stay in the CPU's cache,
  // where the staging threads write it and the DMA engine reads it. 0: one block per slot
  // (what graph replay uses, whatever is set here).
  std::size_t staging_bytes = std::size_t{48} << 20;
  bool use_graphs = false;      // replay a captured graph per slot for same-size batches
  // Every stage of every batch is kept (about 250 bytes an unbatched item) for traces and
  // reports: turn it off for an engine that runs for long, or clear timeline() now and then.
  bool record_timeline = true;
};

struct RunStats {
  std::size_t submitted = 0;
  std::size_t done = 0;
  std::size_t failed = 0;
  std::size_t cancelled = 0;
  std::size_t staging_peak_bytes = 0;  // most input staging lent at once, since the engine began
};

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

  [[nodiscard]] Backend backend() const noexcept;
  [[nodiscard]] const EngineOptions& options() const noexcept;
  [[nodiscard]] Timeline& timeline() noexcept;
  // The devices of the set as resolved (CUDA indices, or the host backend's simulated ones),
  // including any lost since.
  [[nodiscard]] const std::vector<int>& devices() const noexcept;
  // A line saying which backend, devices, lanes, depth, batching and staging mode are in use.
  [[nodiscard]] std::string describe() const;

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace streampipe::pipeline
