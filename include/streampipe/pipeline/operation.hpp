// SPDX-License-Identifier: Apache-2.0
#pragma once
// The operation the pipeline applies to every batch. `device` enqueues work on the lane's
// stream (a kernel, a library call, a runtime-compiled kernel) and must not synchronize;
// `host` is the same computation on the CPU, run by the CPU's lanes (and simulated GPUs).
// An operation with both forms may run on every member of a device set. A Batch holds one
// item, or several small items packed into one transfer so that one launch covers them all
// (descriptors() gives a batched kernel each item's offsets).

#include "streampipe/cuda/stream.hpp"
#include "streampipe/pipeline/item_descriptor.hpp"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>

namespace streampipe::pipeline {

class Batch {
 public:
  Batch(std::byte* in, std::size_t in_bytes, std::byte* out, std::size_t out_bytes,
        std::span<const ItemDescriptor> items, const ItemDescriptor* device_items, int lane, int device,
        std::optional<StreamRef> stream, std::span<const std::size_t> indices, int member_lane = 0,
        void* device_state = nullptr) noexcept
      : in_(in), out_(out), in_bytes_(in_bytes), out_bytes_(out_bytes), items_(items),
        device_items_(device_items), lane_(lane), device_(device), member_lane_(member_lane), stream_(stream),
        indices_(indices), device_state_(device_state) {}

  // The whole input and output regions (device memory on the GPU backend, host memory on the
  // host backend). Item k lives at in() + items()[k].in_offset.
  [[nodiscard]] std::byte* in() const noexcept { return in_; }
  [[nodiscard]] std::byte* out() const noexcept { return out_; }
  [[nodiscard]] std::size_t in_bytes() const noexcept { return in_bytes_; }
  [[nodiscard]] std::size_t out_bytes() const noexcept { return out_bytes_; }
  [[nodiscard]] std::span<const ItemDescriptor> items() const noexcept { return items_; }
  [[nodiscard]] std::size_t size() const noexcept { return items_.size(); }
  // The same descriptors in device memory (GPU backend; nullptr on the host backend).
  [[nodiscard]] const ItemDescriptor* device_items() const noexcept { return device_items_; }
  // Submission index of item k.
  [[nodiscard]] std::size_t index(std::size_t k) const noexcept { return indices_[k]; }
  [[nodiscard]] int lane() const noexcept { return lane_; }  // engine-wide
  // The lane among its device's lanes (0 .. that device's lanes - 1).
  [[nodiscard]] int member_lane() const noexcept { return member_lane_; }
  // The device it runs on: the CUDA device of the stream, a simulated GPU, or kCpuDevice.
  [[nodiscard]] int device() const noexcept { return device_; }
  // What Operation::start_device returned for this device (nullptr without it).
  template <typename T>
  [[nodiscard]] T* device_state() const noexcept {
    return static_cast<T*>(device_state_);
  }
  // The lane's stream on the GPU backend.
  [[nodiscard]] StreamRef stream() const { return stream_.value(); }

  template <typename T>
  [[nodiscard]] T* in_as(std::size_t k = 0) const noexcept {
    return reinterpret_cast<T*>(in_ + items_[k].in_offset);
  }
  template <typename T>
  [[nodiscard]] T* out_as(std::size_t k = 0) const noexcept {
    return reinterpret_cast<T*>(out_ + items_[k].out_offset);
  }

 private:
  std::byte* in_;
  std::byte* out_;
  std::size_t in_bytes_;
  std::size_t out_bytes_;
  std::span<const ItemDescriptor> items_;
  const ItemDescriptor* device_items_;
  int lane_;
  int device_;
  int member_lane_;
  std::optional<StreamRef> stream_;
  std::span<const std::size_t> indices_;
  void* device_state_;
};

// Handed to Operation::start_device on a GPU's start thread.
struct DeviceStart {
  int device = 0;  // the CUDA device, current on the calling thread
  int lanes = 0;   // its lanes: batches on it have member_lane() in [0, lanes)
  // Set once the engine no longer needs this GPU (it is being destroyed): a long set-up
  // should stop at its next step by throwing.
  std::function<bool()> stop_requested;
};

struct Operation {
  std::string name;
  std::function<void(const Batch&)> device;  // GPU backend: enqueue on batch.stream()
  std::function<void(const Batch&)> host;    // host backend: compute synchronously
  // Optional: the output size an input size must have; submit() rejects mismatched items.
  std::function<std::size_t(std::size_t in_bytes)> output_bytes;
  // Set when `device` hands the host staging that `produce` filled to work that reads it later
  // on the stream (nvJPEG takes host bitstreams): the staging is then kept until the batch's
  // work has finished, not only its input copy.
  bool reads_staged_input = false;
  // Optional: readies a GPU for this operation (library handles, per-lane state) before it
  // takes work, on that GPU's own start thread, the GPUs of a set in parallel. What it
  // returns is kept until the engine is destroyed (released then, the GPUs in parallel) and
  // reaches device() as Batch::device_state(). If it throws, the GPU stays out of the set
  // with the error as its reason.
  std::function<std::shared_ptr<void>(const DeviceStart&)> start_device;
};

}  // namespace streampipe::pipeline
