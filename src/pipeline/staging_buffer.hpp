// SPDX-License-Identifier: Apache-2.0
#pragma once
// Host staging memory owned by a slot: pinned blocks from the process-wide pool on the GPU
// backend (so DMA runs at full speed and repeated runs pay cudaMallocHost once), plain
// memory on the host backend. Grows on demand, optionally keeping its content. Pinned blocks
// lie on `numa_node` where the host has several (the node nearest the lane's GPU).

#include "streampipe/cuda/pinned_pool.hpp"

#include <cstddef>
#include <cstring>
#include <memory>

namespace streampipe::pipeline::detail {

class StagingBuffer {
 public:
  explicit StagingBuffer(bool pinned = false, int numa_node = -1) : pinned_(pinned), numa_node_(numa_node) {}

  [[nodiscard]] std::byte* data() const noexcept { return pinned_ ? block_.data() : plain_.get(); }
  [[nodiscard]] std::size_t capacity() const noexcept { return capacity_; }

  void reserve(std::size_t bytes, std::size_t keep = 0) {
    if (bytes <= capacity_) return;
    const std::size_t want = std::max(bytes, capacity_ + capacity_ / 2);
    if (pinned_) {
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
  PinnedBlock block_;
  std::unique_ptr<std::byte[]> plain_;
  std::size_t capacity_ = 0;
};

}  // namespace streampipe::pipeline::detail
