// SPDX-License-Identifier: Apache-2.0
#pragma once
// The device phase of one slot on one lane: copies in, the operation, copies out, timed.
// GpuLane enqueues on a CUDA stream and waits on an event; HostLane runs the same steps on
// a thread with memcpy, so the engine above is identical for both backends.

#include "streampipe/cuda/memory_resource.hpp"
#include "streampipe/pipeline/operation.hpp"

#include <cstddef>
#include <exception>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

namespace streampipe::pipeline::detail {

struct CopyIn {
  const std::byte* src;    // host memory (staging or the caller's pinned memory)
  std::size_t offset;      // into the lane's input region
  std::size_t bytes;
};
struct CopyOut {
  std::size_t offset;      // into the lane's output region
  std::byte* dst;          // host memory
  std::size_t bytes;
};

// What the engine hands a lane, and what the lane reports back.
struct SlotWork {
  int slot = 0;
  const Operation* op = nullptr;
  std::vector<CopyIn> copies_in;
  std::vector<CopyOut> copies_out;
  std::size_t in_bytes = 0;   // extent of the input region the operation sees
  std::size_t out_bytes = 0;
  std::vector<ItemDescriptor> descriptors;
  std::vector<std::size_t> indices;
  bool stable_addresses = false;  // all host pointers are slot-owned: graph replay is safe

  // Filled by the lane.
  std::exception_ptr error;
  bool error_in_operation = false;
  bool must_wait = false;  // something was enqueued that wait() must complete
  bool inputs_fenced = false;  // wait_inputs() can tell when the copies in are done
  double h2d_start_ms = 0, h2d_end_ms = 0, compute_end_ms = 0, d2h_end_ms = 0;
  double enqueue_ms = 0;
  double enqueued_at_ms = 0;  // when the lane began to enqueue it, on the engine's clock
  bool replayed_graph = false;
  bool graph_timing = false;  // one span start..done: the copies ran inside a graph

  // Resets every field for the slot's next batch; the vectors keep their capacity, so a
  // slot's steady state allocates nothing here.
  void clear() noexcept {
    auto in = std::move(copies_in);
    auto out = std::move(copies_out);
    auto desc = std::move(descriptors);
    auto idx = std::move(indices);
    *this = SlotWork{};
    in.clear();
    out.clear();
    desc.clear();
    idx.clear();
    copies_in = std::move(in);
    copies_out = std::move(out);
    descriptors = std::move(desc);
    indices = std::move(idx);
  }
};

class LaneExecutor {
 public:
  virtual ~LaneExecutor() = default;
  // Asynchronous; never throws: failures land in work.error.
  virtual void enqueue(SlotWork& work) = 0;
  // Blocks until the work enqueued for this slot finished; fills the times. Throws the
  // device's error (CudaError), if any.
  virtual void wait(SlotWork& work) = 0;
  // Blocks until the copies in last enqueued for `slot` (with inputs_fenced set) have read
  // their host memory; may wait for a later enqueue of the same slot, never for less. Safe
  // to call from any thread while the lane goes on.
  virtual void wait_inputs(int slot) = 0;
};

struct LaneConfig {
  int lane = 0;             // engine-wide
  int member_lane = 0;      // among its member's lanes
  int device = 0;           // the CUDA device, a simulated GPU, or kCpuDevice
  int slots = 1;            // slot ids this lane may see are < slots (its member's ids)
  int max_batch = 1;
  bool use_graphs = false;
  // Each stage timed by events (start, inputs in, computed, done). Off when the member has
  // more lanes than the hardware queues: a timed event holds its queue until the kernel
  // before it ends, and lanes sharing a queue would run their kernels one at a time. Then
  // a slot is one span on the engine's clock, from its enqueue to its completion seen.
  bool timed_stages = true;
  double (*now_ms)() = nullptr;  // the engine's clock
  // The member's Operation::start_device state, set before the member takes work.
  const std::shared_ptr<void>* device_state = nullptr;
  // Where a GPU lane takes its device memory (EngineOptions::device_memory); empty: CUDA's.
  std::optional<DeviceResourceRef> device_memory;
};

// The state a lane hands to the operation (Batch::device_state()).
[[nodiscard]] inline void* device_state_of(const LaneConfig& c) noexcept {
  return c.device_state != nullptr ? c.device_state->get() : nullptr;
}

std::unique_ptr<LaneExecutor> make_gpu_lane(const LaneConfig& config);
std::unique_ptr<LaneExecutor> make_host_lane(const LaneConfig& config);

}  // namespace streampipe::pipeline::detail
