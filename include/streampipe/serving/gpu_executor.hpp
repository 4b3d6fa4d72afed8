// SPDX-License-Identifier: Apache-2.0
#pragma once
// The GPU BatchExecutor. Each lane is a stream with its own model scratch and two slots of
// pinned staging; lanes run batches concurrently, and a lane's second slot lets the next
// batch be gathered and enqueued behind the one in flight. A batch is gathered into its
// slot's pinned input and then, by BatchIo:
//   copy:   its rows are copied H2D into the lane's device input (padding rows zeroed on the
//           device), computed, and its rows copied D2H; events time H2D, compute and D2H;
//   mapped: the model reads each input row and writes each output row itself, through the
//           link, from its first and last kernels, by a table of row pointers: no copy
//           engine steps and their fixed costs, which dominate small batches
//           (docs/batching.md, "Mapped I/O", has the figures); H2D and D2H are then part of
//           compute and report as zero. A pinned request
//           (Request::pinned) is read and written in place, in its own memory; only the
//           others pass through the slot's staging (a host copy each way). Padding rows
//           have null pointers: read as zeros, never written.
// Enqueue time is the host time to enqueue the compute (as in trtexec): one graph launch,
// or the model's launches.
//
// Plans: with graphs on, prepare() captures the model's forward pass once per bucket and
// lane into a CUDA graph (one cudaGraphLaunch per batch); with graphs off the model's
// kernels are launched one by one. Either way every bucket runs once per lane in prepare(),
// so module loading, cuBLAS heuristics and graph upload stay out of measured requests.
//
// Its lanes are lanes in the engine's sense, built from the same core kit (SlotEvents times a
// slot, a GraphCache per lane keeps the plans), but not run by the engine's LaneExecutor:
// mapped I/O and a graph per bucket, replayed whatever the requests' addresses, have no
// counterpart there (docs/architecture.md says why, with the measurements).

#include "streampipe/serving/executor.hpp"
#include "streampipe/cuda/device.hpp"
#include "streampipe/cuda/memory_resource.hpp"
#include "streampipe/cuda/stream.hpp"

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace streampipe::serving {

// One lane's instance of a model: its scratch and library handles for up to max_rows rows.
class ModelLane {
 public:
  virtual ~ModelLane() = default;
  // Host-side preparation for batches of `rows` (algorithm choice); before the first enqueue.
  virtual void prepare(std::size_t rows) = 0;
  // Enqueues the forward pass of `rows` rows on the lane's stream: in is rows × input_size,
  // out rows × output_size, in device memory. Must be capturable: no sync, no allocation.
  virtual void enqueue(const float* d_in, float* d_out, std::size_t rows) = 0;
  // The same pass for mapped I/O (a model whose accepts_mapped_io() is true implements it):
  // row r is read from in_rows[r] and written to out_rows[r], host memory mapped for the
  // device; a null input row reads as zeros, a null output row is not written. The tables
  // are in memory the device reads when the pass runs (so a captured graph sees new rows).
  virtual void enqueue_rows(const float* const* in_rows, float* const* out_rows, std::size_t rows);
};

enum class BatchIo { copy, mapped };

class DeviceModel {
 public:
  virtual ~DeviceModel() = default;
  [[nodiscard]] virtual std::size_t input_size() const = 0;
  [[nodiscard]] virtual std::size_t output_size() const = 0;
  [[nodiscard]] virtual std::unique_ptr<ModelLane> make_lane(StreamRef stream, std::size_t max_rows) = 0;
  // True when its lanes implement enqueue_rows() and touch the rows only in kernels that
  // stream through them once (a conversion, say), so mapped host memory costs one pass
  // over the link. A library call that read them repeatedly would pull them over the link
  // each time.
  [[nodiscard]] virtual bool accepts_mapped_io() const { return false; }
};

struct GpuExecutorOptions {
  std::size_t lanes = 2;
  bool graphs = true;                               // a CUDA graph per bucket per lane
  report::SyncMode sync = report::SyncMode::spin;   // how a lane thread waits for its batch
  BatchIo io = BatchIo::copy;                       // mapped needs model.accepts_mapped_io()
  // Where the lanes' device input and output buffers (copied I/O) come from, in stream order
  // on each lane's stream, as EngineOptions::device_memory; it must outlive the executor.
  // Empty: cudaMalloc. The model's own scratch is its lanes' affair (DeviceModel::make_lane).
  std::optional<DeviceResourceRef> device_memory{};
  // Where each slot's pinned staging and (mapped I/O) row tables come from, as
  // EngineOptions::staging_memory: page-locked memory, mapped for the device for mapped I/O
  // (cudaMallocHost's is, with unified addressing); it must outlive the executor. Empty: the
  // staging lent by PinnedPool::global(), the row tables from cudaMallocHost.
  std::optional<HostResourceRef> staging_memory{};
};

class GpuExecutor final : public BatchExecutor {
 public:
  // The model must outlive the executor.
  GpuExecutor(const Device& device, DeviceModel& model, GpuExecutorOptions options);
  ~GpuExecutor() override;
  GpuExecutor(const GpuExecutor&) = delete;
  GpuExecutor& operator=(const GpuExecutor&) = delete;

  [[nodiscard]] std::size_t lanes() const override;
  [[nodiscard]] std::size_t input_size() const override { return model_.input_size(); }
  [[nodiscard]] std::size_t output_size() const override { return model_.output_size(); }
  [[nodiscard]] std::string device_name() const override { return device_.name(); }
  [[nodiscard]] report::SyncMode sync_mode() const override { return options_.sync; }
  // A request that claims pinned memory (Request::pinned) whose input or output is not
  // page-locked host memory mapped for this device is refused, saying which.
  [[nodiscard]] std::optional<std::string> refusal(const Request& request) const override;
  void prepare(std::span<const std::size_t> buckets) override;
  void launch(std::size_t lane, std::size_t slot, const Batch& batch) override;
  void wait(std::size_t lane, std::size_t slot) noexcept override;
  BatchTiming finish(std::size_t lane, std::size_t slot, const Batch& batch) override;
  [[nodiscard]] bool graphs() const noexcept { return options_.graphs; }
  [[nodiscard]] BatchIo io() const noexcept { return options_.io; }

 private:
  struct Slot;
  struct Lane;
  Lane& checked_lane(std::size_t lane, std::size_t slot);
  void enqueue(Lane& lane, Slot& slot, std::size_t rows, std::size_t bucket);
  // The model's forward pass for `bucket` rows: from the lane's device buffers (copied I/O)
  // or through the slot's row tables (mapped I/O).
  void enqueue_model(Lane& lane, Slot& slot, std::size_t bucket);
  BatchTiming complete(Lane& lane, Slot& slot);

  Device device_;
  DeviceModel& model_;
  GpuExecutorOptions options_;
  std::vector<std::unique_ptr<Lane>> lanes_;
};

}  // namespace streampipe::serving
