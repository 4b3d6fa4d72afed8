// SPDX-License-Identifier: Apache-2.0
#include "streampipe/serving/gpu_executor.hpp"

#include "streampipe/cuda/device_buffer.hpp"
#include "streampipe/cuda/error.hpp"
#include "streampipe/cuda/graph_cache.hpp"
#include "streampipe/cuda/nvtx.hpp"
#include "streampipe/cuda/pinned_buffer.hpp"
#include "streampipe/cuda/pinned_pool.hpp"
#include "streampipe/cuda/slot_events.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <stdexcept>
#include <type_traits>
#include <utility>

namespace streampipe::serving {

namespace {

template <typename T>
PinnedBuffer<T> pinned_table(std::size_t count, const std::optional<HostResourceRef>& resource) {
  return resource ? PinnedBuffer<T>(count, *resource) : PinnedBuffer<T>(count);
}

}  // namespace

// A slot holds one batch in flight: its pinned staging, row tables and events (core's
// SlotEvents, as the engine's lanes time theirs). The device buffers and the model's scratch are the
// lane's, shared by both slots: the lane's one stream orders the second batch's upload
// after the first batch's download.
struct GpuExecutor::Slot {
  Slot(const Device& d, EventWait wait) : events(d, EventTiming::enabled, EventWait::spin, wait) {}

  // `count` floats of page-locked staging: from `resource` when there is one, else lent by
  // PinnedPool::global() as the engine's staging is.
  class Staging {
   public:
    std::span<float> take(std::size_t count, const std::optional<HostResourceRef>& resource) {
      if (resource) {
        owned_ = PinnedBuffer<float>(count, *resource);
        return owned_.span();
      }
      block_ = PinnedPool::global().acquire(count * sizeof(float));
      return block_.as<float>();
    }

   private:
    PinnedBlock block_;
    PinnedBuffer<float> owned_;
  };

  // Staging (GpuExecutorOptions::staging_memory): every row with copied I/O; with mapped I/O
  // the rows of requests not pinned.
  Staging in_staging, out_staging;
  std::span<float> h_in, h_out;
  // Mapped I/O: where the model reads row r and writes it, and the staging and those tables
  // as the device addresses them.
  PinnedBuffer<const float*> in_rows;
  PinnedBuffer<float*> out_rows;
  const float* mapped_in = nullptr;
  float* mapped_out = nullptr;
  const float* const* mapped_in_rows = nullptr;
  float* const* mapped_out_rows = nullptr;
  SlotEvents events;
  double enqueue_ms = 0;
  bool in_flight = false;
  bool waited = false;
  cudaError_t status = cudaSuccess;  // of the wait for `done`

  // Spins or sleeps as `done` was created (GpuExecutorOptions::sync).
  void wait() noexcept {
    if (in_flight && !waited) {
      status = cudaEventSynchronize(events.done.handle());
      waited = true;
    }
  }
  // Row r of the model's I/O goes through this slot's staging.
  void stage_row(std::size_t r, std::size_t in, std::size_t out) {
    in_rows[r] = mapped_in + r * in;
    out_rows[r] = mapped_out + r * out;
  }
};

namespace {

template <typename T>
T* device_view(T* host) {
  void* p = nullptr;
  SP_CUDA_CHECK(cudaHostGetDevicePointer(&p, const_cast<std::remove_const_t<T>*>(host), 0));
  return static_cast<T*>(p);
}

}  // namespace

void ModelLane::enqueue_rows(const float* const*, float* const*, std::size_t) {
  throw std::logic_error("ModelLane: this model does not implement mapped I/O (enqueue_rows)");
}

struct GpuExecutor::Lane {
  Lane(const Device& d, EventWait wait) : stream(d), slots{Slot(d, wait), Slot(d, wait)} {}
  Stream stream;
  DeviceBuffer<float> d_in, d_out;
  std::unique_ptr<ModelLane> model;
  // (bucket, slot) -> graph, graphs on; with copied I/O both slots share slot 0's graph.
  GraphCache<std::pair<std::size_t, std::size_t>> plans;
  std::vector<std::size_t> prepared;       // buckets prepared (graphs off)
  std::array<Slot, kSlotsPerLane> slots;
};

GpuExecutor::GpuExecutor(const Device& device, DeviceModel& model, GpuExecutorOptions options)
    : device_(device), model_(model), options_(options) {
  if (options_.lanes == 0) throw std::invalid_argument("GpuExecutor: at least one lane");
  if (model_.input_size() == 0 || model_.output_size() == 0)
    throw std::invalid_argument("GpuExecutor: the model's input and output sizes must be positive");
  if (options_.io == BatchIo::mapped && !model_.accepts_mapped_io())
    throw std::invalid_argument("GpuExecutor: mapped I/O asked for, but the model does not accept mapped host memory");
  const CurrentDeviceGuard guard(device_);
  const EventWait wait = options_.sync == report::SyncMode::blocking ? EventWait::blocking : EventWait::spin;
  for (std::size_t i = 0; i < options_.lanes; ++i) lanes_.push_back(std::make_unique<Lane>(device_, wait));
}

GpuExecutor::~GpuExecutor() {
  // Work may still be in flight if a run threw after enqueueing: let it finish before the
  // buffers it uses are freed.
  for (auto& lane : lanes_)
    if (lane->stream) SP_CUDA_CHECK_NOTHROW(cudaStreamSynchronize(lane->stream.handle()));
}

std::size_t GpuExecutor::lanes() const { return lanes_.size(); }

void GpuExecutor::prepare(std::span<const std::size_t> buckets) {
  if (buckets.empty()) throw std::invalid_argument("GpuExecutor::prepare: no buckets");
  const std::size_t largest = *std::max_element(buckets.begin(), buckets.end());
  const CurrentDeviceGuard guard(device_);
  const NvtxRange range("GpuExecutor::prepare");
  const std::size_t in = model_.input_size(), out = model_.output_size();
  const bool mapped = options_.io == BatchIo::mapped;
  for (auto& lane_ptr : lanes_) {
    Lane& lane = *lane_ptr;
    for (Slot& slot : lane.slots) {
      slot.h_in = slot.in_staging.take(largest * in, options_.staging_memory);
      slot.h_out = slot.out_staging.take(largest * out, options_.staging_memory);
      std::fill(slot.h_in.begin(), slot.h_in.end(), 0.0f);
      if (mapped) {
        slot.mapped_in = device_view(slot.h_in.data());
        slot.mapped_out = device_view(slot.h_out.data());
        slot.in_rows = pinned_table<const float*>(largest, options_.staging_memory);
        slot.out_rows = pinned_table<float*>(largest, options_.staging_memory);
        slot.mapped_in_rows = device_view(slot.in_rows.data());
        slot.mapped_out_rows = device_view(slot.out_rows.data());
        // Warm-up runs compute on the zeroed staging, never on uninitialized memory.
        for (std::size_t r = 0; r < largest; ++r) slot.stage_row(r, in, out);
      }
    }
    if (!mapped) {
      const DeviceResourceRef memory = options_.device_memory.value_or(cuda_malloc_resource());
      lane.d_in = DeviceBuffer<float>(largest * in, lane.stream.ref(), memory);
      lane.d_out = DeviceBuffer<float>(largest * out, lane.stream.ref(), memory);
      // Warm-up runs compute on zeros, never on uninitialized memory.
      SP_CUDA_CHECK(cudaMemsetAsync(lane.d_in.data(), 0, lane.d_in.bytes(), lane.stream.handle()));
    }
    lane.model = model_.make_lane(lane.stream.ref(), largest);
    lane.plans.clear();
    lane.prepared.clear();
    for (const std::size_t b : buckets) {
      lane.model->prepare(b);
      // One eager run first: lazy module loading and library set-up happen outside capture.
      enqueue_model(lane, lane.slots[0], b);
      lane.stream.synchronize();
      if (options_.graphs) {
        for (std::size_t k = 0; k < (mapped ? kSlotsPerLane : 1); ++k) {
          (void)lane.plans.capture(std::pair{b, k}, lane.stream.ref(), [&] { enqueue_model(lane, lane.slots[k], b); });
        }
      }
      lane.prepared.push_back(b);
      // The plan's first use, copies included, happens here and not in a measured request.
      for (Slot& slot : lane.slots) {
        enqueue(lane, slot, b, b);
        (void)complete(lane, slot);
      }
    }
  }
}

void GpuExecutor::enqueue_model(Lane& lane, Slot& slot, std::size_t bucket) {
  if (options_.io == BatchIo::mapped)
    lane.model->enqueue_rows(slot.mapped_in_rows, slot.mapped_out_rows, bucket);
  else
    lane.model->enqueue(lane.d_in.data(), lane.d_out.data(), bucket);
}

std::optional<std::string> GpuExecutor::refusal(const Request& request) const {
  if (!request.pinned) return std::nullopt;
  const auto mapped = [&](const void* p, std::size_t bytes) { return is_device_mapped(device_, p, bytes); };
  const bool in = mapped(request.input.data(), request.input.size_bytes());
  const bool out = mapped(request.output.data(), request.output.size_bytes());
  if (in && out) return std::nullopt;
  return fmt::format("marked pinned, but its {} {} not page-locked host memory mapped for GPU {}",
                     in ? "output" : (out ? "input" : "input and output"), in || out ? "is" : "are",
                     device_.index());
}

void GpuExecutor::enqueue(Lane& lane, Slot& slot, std::size_t rows, std::size_t bucket) {
  const std::size_t in = model_.input_size(), out = model_.output_size();
  const StreamRef s = lane.stream.ref();
  const bool mapped = options_.io == BatchIo::mapped;
  try {
    slot.events.start.record(s);
    if (!mapped) {
      // Only the real rows cross the link; the padding rows are zeroed where they are used.
      SP_CUDA_CHECK(cudaMemcpyAsync(lane.d_in.data(), slot.h_in.data(), rows * in * sizeof(float),
                                    cudaMemcpyHostToDevice, s.handle()));
      if (bucket > rows)
        SP_CUDA_CHECK(
            cudaMemsetAsync(lane.d_in.data() + rows * in, 0, (bucket - rows) * in * sizeof(float), s.handle()));
    }
    slot.events.inputs_in.record(s);
    // Enqueue time covers the compute only (as trtexec's does): one graph launch, or the
    // model's launches one by one.
    const auto t0 = std::chrono::steady_clock::now();
    if (options_.graphs) {
      const std::size_t k = mapped ? static_cast<std::size_t>(&slot - lane.slots.data()) : 0;
      if (!lane.plans.replay(std::pair{bucket, k}, s))
        throw std::logic_error(fmt::format("GpuExecutor: bucket {} has no captured graph", bucket));
    } else {
      enqueue_model(lane, slot, bucket);
    }
    const auto t1 = std::chrono::steady_clock::now();
    slot.events.computed.record(s);
    // Only the real rows come back; padding rows are computed but never copied.
    if (!mapped)
      SP_CUDA_CHECK(cudaMemcpyAsync(slot.h_out.data(), lane.d_out.data(), rows * out * sizeof(float),
                                    cudaMemcpyDeviceToHost, s.handle()));
    slot.events.done.record(s);
    slot.enqueue_ms = std::chrono::duration<double, std::milli>(t1 - t0).count();
  } catch (...) {
    // Nothing of a failed launch may stay running: its copies read and write the slot's
    // staging, which the next batch refills.
    SP_CUDA_CHECK_NOTHROW(cudaStreamSynchronize(lane.stream.handle()));
    throw;
  }
  slot.in_flight = true;
  slot.waited = false;
}

BatchTiming GpuExecutor::complete(Lane& lane, Slot& slot) {
  slot.wait();
  slot.in_flight = false;
  if (slot.status != cudaSuccess) {
    const cudaError_t status = std::exchange(slot.status, cudaSuccess);
    SP_CUDA_CHECK_NOTHROW(cudaStreamSynchronize(lane.stream.handle()));
    SP_CUDA_CHECK(status);
  }
  const SlotIntervals intervals = slot.events.intervals();
  BatchTiming t;
  t.enqueue_ms = slot.enqueue_ms;
  t.h2d_ms = intervals.in_ms;
  t.compute_ms = intervals.compute_ms;
  t.d2h_ms = intervals.out_ms;
  return t;
}

GpuExecutor::Lane& GpuExecutor::checked_lane(std::size_t lane_index, std::size_t slot) {
  if (lane_index >= lanes_.size()) throw std::out_of_range(fmt::format("GpuExecutor: no lane {}", lane_index));
  if (slot >= kSlotsPerLane) throw std::out_of_range(fmt::format("GpuExecutor: no slot {}", slot));
  return *lanes_[lane_index];
}

void GpuExecutor::launch(std::size_t lane_index, std::size_t slot_index, const Batch& batch) {
  Lane& lane = checked_lane(lane_index, slot_index);
  Slot& slot = lane.slots[slot_index];
  if (slot.in_flight)
    throw std::logic_error(fmt::format("GpuExecutor: slot {} of lane {} is busy", slot_index, lane_index));
  if (std::find(lane.prepared.begin(), lane.prepared.end(), batch.bucket) == lane.prepared.end())
    throw std::logic_error(fmt::format("GpuExecutor: bucket {} has no prepared plan", batch.bucket));
  if (batch.size() == 0 || batch.size() > batch.bucket)
    throw std::invalid_argument(fmt::format("GpuExecutor: a batch of {} does not fit bucket {}", batch.size(), batch.bucket));
  const CurrentDeviceGuard guard(device_);
  const NvtxRange range("GpuExecutor::launch");
  const std::size_t in = model_.input_size(), out = model_.output_size(), rows = batch.size();
  if (options_.io == BatchIo::mapped) {
    // Pinned requests are read and written where they are; the others through the staging.
    gather_inputs(batch, slot.h_in, in, RowsToCopy::not_pinned);
    for (std::size_t r = 0; r < rows; ++r) {
      if (batch.is_pinned(r)) {
        slot.in_rows[r] = batch.inputs[r].data();
        slot.out_rows[r] = batch.outputs[r].data();
      } else {
        slot.stage_row(r, in, out);
      }
    }
    for (std::size_t r = rows; r < batch.bucket; ++r) {
      slot.in_rows[r] = nullptr;
      slot.out_rows[r] = nullptr;
    }
  } else {
    gather_inputs(batch, slot.h_in, in);
  }
  enqueue(lane, slot, rows, batch.bucket);
}

void GpuExecutor::wait(std::size_t lane_index, std::size_t slot_index) noexcept {
  if (lane_index >= lanes_.size() || slot_index >= kSlotsPerLane) return;
  lanes_[lane_index]->slots[slot_index].wait();
}

BatchTiming GpuExecutor::finish(std::size_t lane_index, std::size_t slot_index, const Batch& batch) {
  Lane& lane = checked_lane(lane_index, slot_index);
  Slot& slot = lane.slots[slot_index];
  if (!slot.in_flight)
    throw std::logic_error(fmt::format("GpuExecutor: nothing launched in slot {} of lane {}", slot_index, lane_index));
  const CurrentDeviceGuard guard(device_);
  const NvtxRange range("GpuExecutor::finish");
  const BatchTiming t = complete(lane, slot);
  // Pinned requests' outputs were written in place by the device (mapped I/O).
  scatter_outputs(slot.h_out, batch, model_.output_size(),
                  options_.io == BatchIo::mapped ? RowsToCopy::not_pinned : RowsToCopy::all);
  return t;
}

}  // namespace streampipe::serving
