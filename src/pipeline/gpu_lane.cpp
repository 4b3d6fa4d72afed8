// SPDX-License-Identifier: Apache-2.0
// A lane on the GPU: one non-blocking stream with its device buffers, grown in stream order.
// Per slot: core's four events (SlotEvents; "inputs in" and "done" blocking-sync, so the
// threads that wait for them sleep instead of spinning), timed unless LaneConfig::timed_stages
// is off, and, in graph mode, a GraphCache holding the captured graph of that slot's last
// batch layout.

#include "lane_executor.hpp"

#include "streampipe/cuda/device_buffer.hpp"
#include "streampipe/cuda/event_clock.hpp"
#include "streampipe/cuda/graph_cache.hpp"
#include "streampipe/cuda/nvtx.hpp"
#include "streampipe/cuda/pinned_buffer.hpp"
#include "streampipe/cuda/slot_events.hpp"

#include <algorithm>
#include <optional>

namespace streampipe::pipeline::detail {
namespace {

struct GraphKey {
  std::vector<CopyIn> in;
  std::vector<CopyOut> out;
  std::size_t in_bytes = 0, out_bytes = 0, batch = 0;
  const void* d_in = nullptr;
  const void* d_out = nullptr;

  bool operator==(const GraphKey& o) const {
    const auto same_in = [](const CopyIn& a, const CopyIn& b) {
      return a.src == b.src && a.offset == b.offset && a.bytes == b.bytes;
    };
    const auto same_out = [](const CopyOut& a, const CopyOut& b) {
      return a.dst == b.dst && a.offset == b.offset && a.bytes == b.bytes;
    };
    return in_bytes == o.in_bytes && out_bytes == o.out_bytes && batch == o.batch && d_in == o.d_in &&
           d_out == o.d_out && std::equal(in.begin(), in.end(), o.in.begin(), o.in.end(), same_in) &&
           std::equal(out.begin(), out.end(), o.out.begin(), o.out.end(), same_out);
  }
};

struct SlotResources {
  SlotResources(const Device& d, EventTiming timing) : events(d, timing, EventWait::blocking, EventWait::blocking) {}
  SlotEvents events;
  PinnedBuffer<ItemDescriptor> descriptors;
  GraphCache<GraphKey> graphs{1};  // the slot's last layout
};

class GpuLane final : public LaneExecutor {
 public:
  explicit GpuLane(const LaneConfig& config)
      : device_(config.device),
        config_(config),
        stream_(device_),
        clock_(device_, stream_.ref(), config.now_ms),
        regions_(config.device_memory.value_or(cuda_async_resource())) {
    // A lane sees only its member's slots that take it (every lanes-th): their events and
    // buffers are made on their first batch, not for every slot of the member.
    slots_.resize(static_cast<std::size_t>(config.slots));
    if (config.max_batch > 1) {
      const auto count = static_cast<std::size_t>(config.max_batch);
      d_descriptors_ = config.device_memory ? DeviceBuffer<ItemDescriptor>(count, stream_.ref(), *config.device_memory)
                                            : DeviceBuffer<ItemDescriptor>(device_, count);
    }
  }

  ~GpuLane() override {
    try {
      stream_.synchronize();
    } catch (const std::exception&) {
      // The error was reported to the items it affected; nothing more to do in teardown.
    }
  }

  void enqueue(SlotWork& work) override {
    const double t0 = config_.now_ms();
    NvtxRange range("streampipe lane enqueue");
    const StreamRef s = stream_.ref();
    std::unique_ptr<SlotResources>& resources = slots_.at(static_cast<std::size_t>(work.slot));
    try {
      CurrentDeviceGuard guard(device_);
      if (!resources) {
        resources = std::make_unique<SlotResources>(
            device_, config_.timed_stages ? EventTiming::enabled : EventTiming::disabled);
        if (config_.max_batch > 1)
          resources->descriptors = PinnedBuffer<ItemDescriptor>(static_cast<std::size_t>(config_.max_batch));
      }
    } catch (...) {
      work.error = std::current_exception();
      work.must_wait = false;
      work.enqueue_ms = config_.now_ms() - t0;
      return;
    }
    SlotResources& slot = *resources;
    try {
      CurrentDeviceGuard guard(device_);
      grow(work.in_bytes, work.out_bytes);
      const bool batched = work.descriptors.size() > 1;
      if (batched)
        std::copy(work.descriptors.begin(), work.descriptors.end(), slot.descriptors.data());

      const Batch batch(d_in_ ? d_in_->data() : nullptr, work.in_bytes, d_out_ ? d_out_->data() : nullptr,
                        work.out_bytes, work.descriptors, batched ? d_descriptors_.data() : nullptr,
                        config_.lane, config_.device, s, work.indices, config_.member_lane,
                        device_state_of(config_));
      const auto enqueue_in = [&] {
        for (const auto& c : work.copies_in)
          // Default: the source is pinned host memory or device memory (unified addressing).
          SP_CUDA_CHECK(cudaMemcpyAsync(d_in_->data() + c.offset, c.src, c.bytes, cudaMemcpyDefault, s.handle()));
        if (batched)
          SP_CUDA_CHECK(cudaMemcpyAsync(d_descriptors_.data(), slot.descriptors.data(),
                                        work.descriptors.size() * sizeof(ItemDescriptor), cudaMemcpyHostToDevice,
                                        s.handle()));
      };
      const auto enqueue_out = [&] {
        for (const auto& c : work.copies_out)
          SP_CUDA_CHECK(cudaMemcpyAsync(c.dst, d_out_->data() + c.offset, c.bytes, cudaMemcpyDefault, s.handle()));
      };

      if (config_.use_graphs && work.stable_addresses) {
        // Graph replay: copies and operation captured once per slot layout, replayed while the
        // layout (sizes, staging and device addresses) stays the same. Events stay outside the
        // graph, so a replayed slot is timed as one span (reported as compute).
        GraphKey key{work.copies_in, work.copies_out, work.in_bytes, work.out_bytes, work.descriptors.size(),
                     d_in_ ? d_in_->data() : nullptr, d_out_ ? d_out_->data() : nullptr};
        const GraphExec* graph = slot.graphs.find(key);
        if (graph == nullptr) {
          try {
            graph = &slot.graphs.capture(key, s, [&] {
              enqueue_in();
              try {
                work.op->device(batch);
              } catch (...) {
                work.error_in_operation = true;
                throw;
              }
              enqueue_out();
            });
          } catch (...) {
            if (!work.error_in_operation) throw;
            work.error = std::current_exception();
            work.enqueue_ms = config_.now_ms() - t0;
            return;  // nothing was enqueued: the capture only recorded
          }
        } else {
          work.replayed_graph = true;
        }
        work.enqueued_at_ms = t0;
        slot.events.start.record(s);
        graph->launch(s);
        slot.events.done.record(s);
        work.graph_timing = true;
        work.must_wait = true;
        work.enqueue_ms = config_.now_ms() - t0;
        return;
      }

      work.enqueued_at_ms = t0;
      slot.events.start.record(s);
      enqueue_in();
      slot.events.inputs_in.record(s);
      // Fenced: the staging may be taken back once the input copy is done. Not so when the
      // operation's own work reads the staging; then the slot's completion gives it back.
      work.inputs_fenced = !work.op->reads_staged_input;
      try {
        work.op->device(batch);
      } catch (...) {
        work.error = std::current_exception();
        work.error_in_operation = true;
      }
      slot.events.computed.record(s);
      if (!work.error) enqueue_out();
      slot.events.done.record(s);
      work.must_wait = true;
    } catch (...) {
      if (!work.error) work.error = std::current_exception();
      // Whatever was enqueued before the failure must still finish before the slot's
      // staging memory is reused: make the completion thread wait on the stream.
      try {
        slot.events.done.record(s);
        work.must_wait = true;
      } catch (...) {
        work.must_wait = false;
      }
    }
    work.enqueue_ms = config_.now_ms() - t0;
  }

  void wait_inputs(int slot) override {
    // Asked only for a slot whose copies in were enqueued: its resources exist.
    slots_.at(static_cast<std::size_t>(slot))->events.inputs_in.synchronize();
  }

  void wait(SlotWork& work) override {
    if (!work.must_wait) return;
    SlotResources& slot = *slots_.at(static_cast<std::size_t>(work.slot));
    slot.events.done.synchronize();
    if (!config_.timed_stages) {  // one span, as the host saw it, reported as compute
      work.h2d_start_ms = work.h2d_end_ms = work.enqueued_at_ms;
      work.compute_end_ms = work.d2h_end_ms = config_.now_ms();
      return;
    }
    const SlotTimes t = slot.events.times(clock_, work.graph_timing ? SlotSpan::whole : SlotSpan::stages);
    work.h2d_start_ms = t.start_ms;
    work.h2d_end_ms = t.inputs_in_ms;
    work.compute_end_ms = t.computed_ms;
    work.d2h_end_ms = t.done_ms;
  }

 private:
  void grow(std::size_t in_bytes, std::size_t out_bytes) {
    // Stream-ordered: the old buffer is freed after the work already queued that uses it.
    if (in_bytes > 0 && (!d_in_ || d_in_->bytes() < in_bytes)) {
      d_in_.reset();
      d_in_.emplace(stream_.ref(), in_bytes, regions_);
      zero(*d_in_);
    }
    if (out_bytes > 0 && (!d_out_ || d_out_->bytes() < out_bytes)) {
      d_out_.reset();
      d_out_.emplace(stream_.ref(), out_bytes, regions_);
      zero(*d_out_);
    }
  }

  // A region starts zeroed (once per growth, in stream order, at device speed). The copy out
  // of a run of staged items spans the padding between them, which no operation writes, and
  // an operation may read an item's input up to its aligned end (vector loads): without this
  // those bytes are uninitialized, and compute-sanitizer's initcheck reports every such copy.
  void zero(const StreamOrderedBuffer<std::byte>& region) {
    SP_CUDA_CHECK(cudaMemsetAsync(region.data(), 0, region.bytes(), stream_.handle()));
  }

  Device device_;
  LaneConfig config_;
  Stream stream_;
  EventClock clock_;  // the engine's clock for the slots' events
  DeviceResourceRef regions_;  // where d_in_ and d_out_ come from
  std::vector<std::unique_ptr<SlotResources>> slots_;
  std::optional<StreamOrderedBuffer<std::byte>> d_in_, d_out_;
  DeviceBuffer<ItemDescriptor> d_descriptors_;
};

}  // namespace

std::unique_ptr<LaneExecutor> make_gpu_lane(const LaneConfig& config) {
  return std::make_unique<GpuLane>(config);
}

}  // namespace streampipe::pipeline::detail
