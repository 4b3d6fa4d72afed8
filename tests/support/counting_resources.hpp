// SPDX-License-Identifier: Apache-2.0
#pragma once
// Memory resources for GPU tests that count every allocation made through them and check
// every one given back (same pointer, same size): CountingDeviceResource takes its memory
// with cudaMalloc (so that a stream-ordered pool shows any allocation made around it),
// CountingPinnedResource with cudaMallocHost (page-locked, mapped under unified addressing).
// Thread-safe.

#include "streampipe/cuda/error.hpp"
#include "streampipe/cuda/memory_resource.hpp"

#include <cuda_runtime_api.h>

#include <cstddef>
#include <map>
#include <mutex>
#include <vector>

namespace streampipe::testing {

// What a counting resource saw: a mismatch is a deallocation of a pointer it did not hand
// out, or with another size than it was allocated with.
struct ResourceCounts {
  int allocations = 0, deallocations = 0, mismatches = 0;
  std::size_t live_bytes = 0;
  std::vector<std::size_t> sizes;  // of every allocation, in order
};

class AllocationLedger {
 public:
  void allocated(void* p, std::size_t bytes) {
    const std::lock_guard lock(mutex_);
    live_[p] = bytes;
    ++counts_.allocations;
    counts_.live_bytes += bytes;
    counts_.sizes.push_back(bytes);
  }
  void deallocated(void* p, std::size_t bytes) noexcept {
    const std::lock_guard lock(mutex_);
    const auto it = live_.find(p);
    if (it == live_.end() || it->second != bytes) {
      ++counts_.mismatches;
    } else {
      live_.erase(it);
      counts_.live_bytes -= bytes;
    }
    ++counts_.deallocations;
  }
  [[nodiscard]] ResourceCounts counts() const {
    const std::lock_guard lock(mutex_);
    return counts_;
  }

 private:
  mutable std::mutex mutex_;
  std::map<void*, std::size_t> live_;
  ResourceCounts counts_;
};

class CountingDeviceResource final : public DeviceMemoryResource {
 public:
  [[nodiscard]] ResourceCounts counts() const { return ledger_.counts(); }

 private:
  void* do_allocate(StreamRef stream, std::size_t bytes) override {
    void* p = cuda_malloc_resource().allocate(stream, bytes);
    ledger_.allocated(p, bytes);
    return p;
  }
  void do_deallocate(StreamRef stream, void* p, std::size_t bytes) noexcept override {
    ledger_.deallocated(p, bytes);
    cuda_malloc_resource().deallocate(stream, p, bytes);
  }
  AllocationLedger ledger_;
};

class CountingPinnedResource final : public HostMemoryResource {
 public:
  [[nodiscard]] ResourceCounts counts() const { return ledger_.counts(); }

 private:
  void* do_allocate(std::size_t bytes) override {
    void* p = nullptr;
    SP_CUDA_CHECK(cudaMallocHost(&p, bytes));
    ledger_.allocated(p, bytes);
    return p;
  }
  void do_deallocate(void* p, std::size_t bytes) noexcept override {
    ledger_.deallocated(p, bytes);
    SP_CUDA_CHECK_NOTHROW(cudaFreeHost(p));
  }
  AllocationLedger ledger_;
};

}  // namespace streampipe::testing
