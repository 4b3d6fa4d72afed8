// SPDX-License-Identifier: Apache-2.0
#pragma once
// An item is one unit of work through the pipeline: host input -> device -> host output.
// Input and output may be pageable, pinned or registered host memory, or device memory
// (copied on the device, no host round trip); pageable data is staged through pooled pinned
// buffers by host worker threads. Optional host stages replace the
// plain copies: `produce` writes the input into staging (decode a file), `consume` reads the
// output from staging (encode and write). Both run on worker threads, overlapped with the
// device work of other items.

#include <chrono>
#include <cstddef>
#include <exception>
#include <functional>
#include <span>
#include <string>

namespace streampipe::pipeline {

// Handed to Item::produce: allocate() returns the staging span to fill with exactly
// in_bytes of input, and fixes the item's output size. runs_host_form() says which form of
// the operation will take the input, so that produce can prepare it for that form (decode
// a file fully for the CPU, stage it compressed for a GPU decoder).
class StagingInput {
 public:
  virtual ~StagingInput() = default;
  [[nodiscard]] virtual std::span<std::byte> allocate(std::size_t in_bytes, std::size_t out_bytes) = 0;
  [[nodiscard]] virtual bool runs_host_form() const noexcept = 0;
};

// Kinds of work the engine measures apart (Item::work_kind).
inline constexpr int kWorkKinds = 4;

struct Item {
  std::span<const std::byte> in;   // host input; leave empty when `produce` is set
  std::span<std::byte> out;        // host output; leave empty when `consume` is set
  std::function<void(StagingInput&)> produce;
  std::function<void(std::span<const std::byte>)> consume;
  std::string label;               // names the item in errors and the timeline (e.g. a file)
  // `in` or `out` is GPU memory: only a GPU of the set may run it, never the CPU's lanes.
  // The engine finds this out itself once CUDA has started in the process; set it when the
  // first items may come sooner (Python's engine sets it for CuPy and PyTorch arrays).
  bool device_memory = false;
  // How much work the item is beside the run's other items (e.g. the files of a group):
  // devices are dealt batches by their measured time per unit of work, so a device measured
  // on small items is not taken to be as quick on large ones. Positive and finite.
  double work = 1.0;
  // Which kind of work it is, 0 to kWorkKinds - 1: items of one kind cost alike per unit of
  // work, and each device is measured apart on each kind, so that a device measured on one
  // kind is not taken to be as quick on another (gray: single files decoded by host workers
  // whatever device takes them, 0; groups for a GPU's JPEG engines, 1). A batch is of its
  // first item's kind.
  int work_kind = 0;
};

// Typed convenience: spans of trivially copyable elements.
template <typename In, typename Out>
[[nodiscard]] Item make_item(std::span<const In> in, std::span<Out> out, std::string label = {}) {
  Item item;
  item.in = std::as_bytes(in);
  item.out = std::as_writable_bytes(out);
  item.label = std::move(label);
  return item;
}

enum class ItemStatus { done, failed, cancelled };

// Host wall-clock stage durations, and device durations measured with events (ms). For a
// batch of items sharing one transfer and launch, the device figures are the batch's.
struct ItemTiming {
  double queued_ms = 0;     // submit -> slot assigned
  double stage_in_ms = 0;   // produce / pageable copy into staging
  double h2d_ms = 0;
  double compute_ms = 0;
  double d2h_ms = 0;
  double stage_out_ms = 0;  // copy out of staging / consume
  double latency_ms = 0;    // submit -> delivered
  double enqueue_ms = 0;    // host time spent enqueuing the device work
};

struct ItemResult {
  std::size_t index = 0;  // submission order, from 0
  std::string label;
  ItemStatus status = ItemStatus::done;
  std::string error;            // why it failed or was cancelled; names the item
  std::exception_ptr exception; // the original exception when it failed
  int device = -1;              // the GPU that ran it, kCpuDevice for the CPU's lanes; -1: none did
  int lane = -1;                // engine-wide: the lanes of the set numbered member after member
  std::size_t batch_size = 1;   // items that shared its transfer and launch
  ItemTiming timing;

  [[nodiscard]] bool ok() const noexcept { return status == ItemStatus::done; }
};

}  // namespace streampipe::pipeline
