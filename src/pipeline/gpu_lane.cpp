// A lane on the GPU: one non-blocking stream that runs the operation, and per slot the
// device buffers, descriptors and timing events. Copies of 1 MiB or more go through the
// engine's two copy queues (one stream per direction, shared by the lanes), so a slot's H2D
// can run while the lane still computes an earlier slot: the buffers are the slot's own, and
// a slot is reused only after the engine waited for its last event. Per slot six timing events (copy in
// started and ended, compute started and ended, copy out started and ended; the last one
// blocking-sync so the completion thread sleeps instead of spinning) and, in graph mode, the
// captured graph of that slot's last batch layout.

#include "lane_executor.hpp"

#include "streampipe/cuda/device_buffer.hpp"
#include "streampipe/cuda/event.hpp"
#include "streampipe/cuda/graph.hpp"
#include "streampipe/cuda/nvtx.hpp"
#include "streampipe/cuda/pinned_buffer.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <mutex>
#include <optional>
#include <stdexcept>

namespace streampipe::pipeline::detail {
namespace {

// Slots moving at least this much (in + out) use the shared copy queues.
constexpr std::size_t kQueuedCopyBytes = std::size_t{1} << 20;

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
  explicit SlotResources(const Device& d)
      : start(d),
        inputs_in(d),
        compute_start(d),
        computed(d),
        outputs_start(d),
        done(d, EventTiming::enabled, EventWait::blocking) {}
  Event start, inputs_in, compute_start, computed, outputs_start, done;
  PinnedBuffer<ItemDescriptor> descriptors;
  DeviceBuffer<ItemDescriptor> d_descriptors;
  std::optional<StreamOrderedBuffer<std::byte>> d_in, d_out;
  std::optional<GraphKey> graph_key;
  GraphExec graph;
};

}  // namespace

struct GpuCopyQueues {
  explicit GpuCopyQueues(const Device& device) : h2d(device), d2h(device) {}
  ~GpuCopyQueues() {
    try {
      h2d.synchronize();
      d2h.synchronize();
    } catch (const std::exception&) {
      // A failed copy was reported to its items; nothing more to do in teardown.
    }
  }
  Stream h2d, d2h;
  // Each holds one slot's whole segment on its queue together, so the events around a
  // slot's copies enclose those copies alone.
  std::mutex h2d_mutex, d2h_mutex;
};

namespace {

class GpuLane final : public LaneExecutor {
 public:
  GpuLane(int device, const LaneConfig& config, std::shared_ptr<GpuCopyQueues> queues)
      : device_(device), config_(config), queues_(std::move(queues)), stream_(device_), anchor_(device_) {
    slots_.reserve(static_cast<std::size_t>(config.slots));
    for (int i = 0; i < config.slots; ++i) {
      auto slot = std::make_unique<SlotResources>(device_);
      if (config.max_batch > 1) {
        slot->descriptors = PinnedBuffer<ItemDescriptor>(static_cast<std::size_t>(config.max_batch));
        if (i % std::max(1, config.lanes) == config.lane)
          slot->d_descriptors = DeviceBuffer<ItemDescriptor>(device_, static_cast<std::size_t>(config.max_batch));
      }
      slots_.push_back(std::move(slot));
    }
    // Places event times on the engine's clock: an event and a host reading taken together.
    anchor_.record(stream_.ref());
    anchor_.synchronize();
    anchor_host_ms_ = config_.now_ms();
  }

  ~GpuLane() override {
    try {
      stream_.synchronize();
      queues_->h2d.synchronize();
      queues_->d2h.synchronize();
    } catch (const std::exception&) {
      // The error was reported to the items it affected; nothing more to do in teardown.
    }
  }

  void enqueue(SlotWork& work) override {
    const double t0 = config_.now_ms();
    NvtxRange range("streampipe lane enqueue");
    SlotResources& slot = *slots_.at(static_cast<std::size_t>(work.slot));
    const bool batched = work.descriptors.size() > 1;
    try {
      CurrentDeviceGuard guard(device_);
      if (batched && slot.d_descriptors.data() == nullptr)
        throw std::logic_error(fmt::format("slot {} is not one of lane {}'s", work.slot, config_.lane));
      if (batched) std::copy(work.descriptors.begin(), work.descriptors.end(), slot.descriptors.data());
      if (config_.use_graphs && work.stable_addresses) {
        enqueue_graph(work, slot, batched);
      } else {
        enqueue_stages(work, slot, batched);
      }
    } catch (...) {
      if (!work.error) work.error = std::current_exception();
      // Whatever was enqueued before the failure must still finish before the slot's
      // staging memory is reused: gather the three streams into `done`.
      try {
        join_into_done(slot);
        work.must_wait = true;
        work.graph_timing = true;  // no stage events to read back
      } catch (...) {
        work.must_wait = false;
      }
    }
    work.enqueue_ms = config_.now_ms() - t0;
  }

  void wait(SlotWork& work) override {
    if (!work.must_wait) return;
    SlotResources& slot = *slots_.at(static_cast<std::size_t>(work.slot));
    slot.done.synchronize();
    const auto at = [&](const Event& e) { return anchor_host_ms_ + elapsed(anchor_, e).count(); };
    work.h2d_start_ms = at(slot.start);
    work.d2h_end_ms = at(slot.done);
    if (work.graph_timing) {
      work.h2d_end_ms = work.compute_start_ms = work.h2d_start_ms;
      work.compute_end_ms = work.d2h_start_ms = work.d2h_end_ms;
    } else {
      work.h2d_end_ms = at(slot.inputs_in);
      work.compute_start_ms = at(slot.compute_start);
      work.compute_end_ms = at(slot.computed);
      work.d2h_start_ms = at(slot.outputs_start);
    }
  }

 private:
  Batch batch_for(const SlotWork& work, const SlotResources& slot, bool batched) const {
    return Batch(slot.d_in ? slot.d_in->data() : nullptr, work.in_bytes, slot.d_out ? slot.d_out->data() : nullptr,
                 work.out_bytes, work.descriptors, batched ? slot.d_descriptors.data() : nullptr, config_.lane,
                 stream_.ref(), work.indices);
  }

  void enqueue_copies_in(const SlotWork& work, const SlotResources& slot, StreamRef s, bool batched) const {
    for (const auto& c : work.copies_in)
      SP_CUDA_CHECK(cudaMemcpyAsync(slot.d_in->data() + c.offset, c.src, c.bytes, cudaMemcpyHostToDevice, s.handle()));
    if (batched)
      SP_CUDA_CHECK(cudaMemcpyAsync(slot.d_descriptors.data(), slot.descriptors.data(),
                                    work.descriptors.size() * sizeof(ItemDescriptor), cudaMemcpyHostToDevice,
                                    s.handle()));
  }

  static void enqueue_copies_out(const SlotWork& work, const SlotResources& slot, StreamRef s) {
    for (const auto& c : work.copies_out)
      SP_CUDA_CHECK(cudaMemcpyAsync(c.dst, slot.d_out->data() + c.offset, c.bytes, cudaMemcpyDeviceToHost, s.handle()));
  }

  // The slot's buffers are allocated in the order of `s`, their first user. Growing frees
  // the old ones, which is safe: the engine reuses a slot only after its last event.
  static void grow(SlotResources& slot, const SlotWork& work, StreamRef s) {
    if (work.in_bytes > 0 && (!slot.d_in || slot.d_in->bytes() < work.in_bytes)) {
      slot.d_in.reset();
      slot.d_in.emplace(s, work.in_bytes);
    }
    if (work.out_bytes > 0 && (!slot.d_out || slot.d_out->bytes() < work.out_bytes)) {
      slot.d_out.reset();
      slot.d_out.emplace(s, work.out_bytes);
    }
  }

  // Copies in on the H2D queue, the operation on the lane's stream once its inputs are in,
  // copies out on the D2H queue once it is done. Slots of small copies keep every stage on
  // the lane's stream: each hop between streams adds device-side latency that copies of a
  // few microseconds cannot hide (measured on an H100: 1 KiB items took twice as long).
  void enqueue_stages(SlotWork& work, SlotResources& slot, bool batched) {
    const StreamRef lane = stream_.ref();
    const bool queued = work.in_bytes + work.out_bytes >= kQueuedCopyBytes;
    {
      std::unique_lock lock(queues_->h2d_mutex, std::defer_lock);
      const StreamRef in = queued ? queues_->h2d.ref() : lane;
      if (queued) lock.lock();
      grow(slot, work, in);
      slot.start.record(in);
      enqueue_copies_in(work, slot, in, batched);
      slot.inputs_in.record(in);
    }
    if (queued) lane.wait(slot.inputs_in);
    slot.compute_start.record(lane);
    work.must_wait = true;  // from here on something runs that the slot must wait for
    try {
      work.op->device(batch_for(work, slot, batched));
    } catch (...) {
      work.error = std::current_exception();
      work.error_in_operation = true;
    }
    slot.computed.record(lane);
    std::unique_lock lock(queues_->d2h_mutex, std::defer_lock);
    const StreamRef out = queued ? queues_->d2h.ref() : lane;
    if (queued) {
      lock.lock();
      out.wait(slot.computed);
    }
    slot.outputs_start.record(out);
    if (!work.error) enqueue_copies_out(work, slot, out);
    slot.done.record(out);
  }

  // Graph replay: copies and operation captured on the lane's stream once per slot layout,
  // replayed while the layout (sizes, staging and device addresses) stays the same. Events
  // stay outside the graph, so a replayed slot is timed as one span (reported as compute).
  void enqueue_graph(SlotWork& work, SlotResources& slot, bool batched) {
    const StreamRef s = stream_.ref();
    grow(slot, work, s);
    GraphKey key{work.copies_in, work.copies_out, work.in_bytes, work.out_bytes, work.descriptors.size(),
                 slot.d_in ? slot.d_in->data() : nullptr, slot.d_out ? slot.d_out->data() : nullptr};
    if (!(slot.graph_key && *slot.graph_key == key)) {
      slot.graph_key.reset();
      GraphCapture capture(s);
      enqueue_copies_in(work, slot, s, batched);
      try {
        work.op->device(batch_for(work, slot, batched));
      } catch (...) {
        work.error = std::current_exception();
        work.error_in_operation = true;
      }
      if (!work.error) enqueue_copies_out(work, slot, s);
      Graph graph = capture.end();
      if (work.error) return;  // nothing was enqueued: the capture only recorded
      slot.graph = GraphExec(graph);
      slot.graph_key = key;
    } else {
      work.replayed_graph = true;
    }
    slot.start.record(s);
    slot.graph.launch(s);
    slot.done.record(s);
    work.graph_timing = true;
    work.must_wait = true;
  }

  // After a failure part-way: `done` completes after everything enqueued so far on the
  // copy queues and the lane's stream.
  void join_into_done(SlotResources& slot) {
    const StreamRef lane = stream_.ref();
    {
      std::lock_guard lock(queues_->h2d_mutex);
      slot.inputs_in.record(queues_->h2d.ref());
    }
    lane.wait(slot.inputs_in);
    slot.computed.record(lane);
    std::lock_guard lock(queues_->d2h_mutex);
    queues_->d2h.ref().wait(slot.computed);
    slot.start.record(queues_->d2h.ref());
    slot.done.record(queues_->d2h.ref());
  }

  Device device_;
  LaneConfig config_;
  std::shared_ptr<GpuCopyQueues> queues_;  // outlives the slots' buffers, freed on its stream
  Stream stream_;
  Event anchor_;
  double anchor_host_ms_ = 0;
  std::vector<std::unique_ptr<SlotResources>> slots_;
};

}  // namespace

std::shared_ptr<GpuCopyQueues> make_gpu_copy_queues(int device) {
  return std::make_shared<GpuCopyQueues>(Device(device));
}

std::unique_ptr<LaneExecutor> make_gpu_lane(int device, const LaneConfig& config,
                                            std::shared_ptr<GpuCopyQueues> copy_queues) {
  return std::make_unique<GpuLane>(device, config, std::move(copy_queues));
}

}  // namespace streampipe::pipeline::detail
