// SPDX-License-Identifier: Apache-2.0
#pragma once
// Host staging memory owned by a slot: on the GPU backend pinned blocks, from the host memory
// resource the engine was given or else from the process-wide pool (so DMA runs at full speed
// and repeated runs pay cudaMallocHost once); plain memory on the host backend. Grows on
// demand, optionally keeping its content. Pool blocks lie on `numa_node` where the host has
// several (the node nearest the lane's GPU); a resource decides where its memory lies.
// Pinned memory is allocated with the lane's GPU current (`device`): on a thread with no
// context the runtime would otherwise make GPU 0's, in a process that may not use GPU 0.

#include "streampipe/cuda/device.hpp"
#include "streampipe/cuda/memory_resource.hpp"
#include "streampipe/cuda/pinned_pool.hpp"

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <memory>
#include <optional>

namespace streampipe::pipeline::detail {

// Gives memory from a host resource back to it.
struct GiveBackToResource {
  HostMemoryResource* resource = nullptr;
  std::size_t bytes = 0;
  void operator()(std::byte* p) const noexcept { resource->deallocate(p, bytes); }
};

class StagingBuffer {
 public:
  explicit StagingBuffer(bool pinned = false, int numa_node = -1, std::optional<HostResourceRef> resource = {},
                         int device = -1)
      : pinned_(pinned), numa_node_(numa_node), device_(device), resource_(resource) {}

  [[nodiscard]] std::byte* data() const noexcept {
    if (!pinned_) return plain_.get();
    return resource_ ? from_resource_.get() : block_.data();
  }
  [[nodiscard]] std::size_t capacity() const noexcept { return capacity_; }

  // Room for `bytes`, the first `keep` bytes kept. Throws what the allocation throws
  // (CudaError when no pinned memory is left, std::bad_alloc); the buffer is then unchanged.
  void reserve(std::size_t bytes, std::size_t keep = 0) {
    if (bytes <= capacity_) return;
    const std::size_t want = std::max(bytes, capacity_ + capacity_ / 2);
    std::optional<CurrentDeviceGuard> on_device;
    if (pinned_ && device_ >= 0) on_device.emplace(Device(device_));
    if (pinned_ && resource_) {
      std::unique_ptr<std::byte, GiveBackToResource> grown(static_cast<std::byte*>(resource_->allocate(want)),
                                                           GiveBackToResource{&resource_->resource(), want});
      if (keep > 0) std::memcpy(grown.get(), from_resource_.get(), keep);
      from_resource_ = std::move(grown);
      capacity_ = want;
    } else if (pinned_) {
      PinnedBlock grown = PinnedPool::global().acquire(want, numa_node_);
      if (keep > 0) std::memcpy(grown.data(), block_.data(), keep);
      block_ = std::move(grown);
      capacity_ = block_.size();
    } else {
      std::unique_ptr<std::byte[]> grown(new std::byte[want]);
      if (keep > 0) std::memcpy(grown.get(), plain_.get(), keep);
      plain_ = std::move(grown);
      capacity_ = want;
    }
  }

 private:
  bool pinned_;
  int numa_node_;
  int device_;  // -1: whatever the calling thread has current
  std::optional<HostResourceRef> resource_;
  PinnedBlock block_;
  std::unique_ptr<std::byte, GiveBackToResource> from_resource_;
  std::unique_ptr<std::byte[]> plain_;
  std::size_t capacity_ = 0;
};

}  // namespace streampipe::pipeline::detail
