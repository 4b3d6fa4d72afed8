// SPDX-License-Identifier: Apache-2.0
#pragma once
// The batcher's execution side. A BatchExecutor owns `lanes()` independent lanes (on a GPU:
// a stream each, with its own staging and device buffers) and one prepared plan per batch
// size bucket. The batcher calls prepare() once with the buckets, then launch() and
// finish() from one thread per lane: calls for different lanes run concurrently, never two
// for one lane.
//
// Each lane has two slots, so that it can hold two batches: the batcher launches the next
// batch before it finishes (waits for, and completes the requests of) the one in flight,
// which keeps the GPU busy while the host does the bookkeeping of the previous batch.
// Per lane, batches are finished in the order they were launched, at most one per slot.
// HostExecutor (CPU) and GpuExecutor (CUDA graphs per bucket) implement it.

#include "streampipe/serving/request.hpp"
#include "streampipe/report/latency_report.hpp"

#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace streampipe::serving {

struct Batch {
  std::size_t bucket = 0;  // plan size; rows size()..bucket-1 are padding
  std::vector<std::span<const float>> inputs;
  std::vector<std::span<float>> outputs;
  // Per request: Request::pinned (checked by the executor's refusal()). Empty: none is.
  std::vector<bool> pinned;
  [[nodiscard]] std::size_t size() const noexcept { return inputs.size(); }
  [[nodiscard]] bool is_pinned(std::size_t row) const noexcept { return row < pinned.size() && pinned[row]; }
};

struct BatchTiming {
  double enqueue_ms = 0.0;  // host time spent enqueueing (or, on the host, running) the batch
  std::optional<double> h2d_ms, compute_ms, d2h_ms;  // GPU event intervals
};

class BatchExecutor {
 public:
  virtual ~BatchExecutor() = default;
  [[nodiscard]] virtual std::size_t lanes() const = 0;
  [[nodiscard]] virtual std::size_t input_size() const = 0;   // floats per request
  [[nodiscard]] virtual std::size_t output_size() const = 0;
  [[nodiscard]] virtual std::string device_name() const = 0;
  [[nodiscard]] virtual report::SyncMode sync_mode() const = 0;
  // Why this executor cannot take `request` (beyond its shape, which the batcher checks), or
  // nothing. Called by submit() on the submitting thread, so it must be thread-safe.
  [[nodiscard]] virtual std::optional<std::string> refusal(const Request& request) const {
    (void)request;
    return std::nullopt;
  }
  // Builds a plan per bucket on every lane and runs each once, so that no measured
  // request pays for a plan's first use. Called once, before any run().
  virtual void prepare(std::span<const std::size_t> buckets) = 0;
  // Starts a batch on `lane` in `slot` (0 or 1; its bucket is one of the prepared ones):
  // its inputs are read before it returns. Throws on failure: the batch's requests fail,
  // nothing else, and nothing of it is left running.
  virtual void launch(std::size_t lane, std::size_t slot, const Batch& batch) = 0;
  // Blocks until the batch launched in `slot` has run (outputs staged, not yet written to
  // the requests). Optional, as finish() waits too; errors surface in finish(). The
  // batcher calls it to launch the next batch the moment the device is free, before it
  // spends host time completing this one. Ignores a slot with nothing launched.
  virtual void wait(std::size_t lane, std::size_t slot) noexcept = 0;
  // Waits for the batch launched in `slot` and writes its outputs to its requests. Throws
  // on failure (the batch's requests fail); the slot is free again either way.
  virtual BatchTiming finish(std::size_t lane, std::size_t slot, const Batch& batch) = 0;
  // One batch, start to end, in slot 0.
  BatchTiming run(std::size_t lane, const Batch& batch) {
    launch(lane, 0, batch);
    return finish(lane, 0, batch);
  }
};

inline constexpr std::size_t kSlotsPerLane = 2;

// Which rows of a batch the copies below move: all, or those of requests not pinned (the
// ones a GPU with mapped I/O cannot read or write in place).
enum class RowsToCopy { all, not_pinned };
// Packs the batch's inputs into the first size() rows of `packed` (bucket × input_size,
// row-major). The padding rows are the executor's to zero (the GPU executor does it on the
// device, sparing the host the fill and the link the zeros), so a plan never computes on
// stale data.
void gather_inputs(const Batch& batch, std::span<float> packed, std::size_t input_size,
                   RowsToCopy rows = RowsToCopy::all);
// Copies the first size() rows of `packed` (bucket × output_size) to the requests.
void scatter_outputs(std::span<const float> packed, const Batch& batch, std::size_t output_size,
                     RowsToCopy rows = RowsToCopy::all);

}  // namespace streampipe::serving
