// SPDX-License-Identifier: Apache-2.0
// nvJPEG's memory in stream order and from the pinned pool (see nvjpeg_allocators.hpp). The
// callbacks are C functions: nothing may be thrown through nvJPEG, so failures are returned
// as nonzero, which nvJPEG reports as NVJPEG_STATUS_ALLOCATOR_FAILURE.

#include "nvjpeg_allocators.hpp"

#include "streampipe/cuda/pinned_pool.hpp"

#include <cuda_runtime_api.h>

#include <mutex>
#include <unordered_map>

namespace streampipe::io::detail {

struct NvjpegAllocators::Blocks {
  std::mutex mutex;
  std::unordered_map<void*, PinnedBlock> lent;
};

namespace {

int device_malloc(void*, void** p, std::size_t bytes, cudaStream_t stream) {
  return cudaMallocAsync(p, bytes, stream) == cudaSuccess ? 0 : 1;
}

int device_free(void*, void* p, std::size_t, cudaStream_t stream) {
  return cudaFreeAsync(p, stream) == cudaSuccess ? 0 : 1;
}

int pinned_malloc(void* context, void** p, std::size_t bytes, cudaStream_t) {
  auto& blocks = *static_cast<NvjpegAllocators::Blocks*>(context);
  try {
    PinnedBlock block = PinnedPool::global().acquire(bytes);
    *p = block.data();
    const std::lock_guard lock(blocks.mutex);
    blocks.lent.emplace(*p, std::move(block));
    return 0;
  } catch (...) {
    return 1;
  }
}

int pinned_free(void* context, void* p, std::size_t, cudaStream_t stream) {
  auto& blocks = *static_cast<NvjpegAllocators::Blocks*>(context);
  // Copies on `stream` may still read or fill the block: it is lent again only after them.
  const bool passed = cudaStreamSynchronize(stream) == cudaSuccess;
  PinnedBlock block;
  {
    const std::lock_guard lock(blocks.mutex);
    const auto it = blocks.lent.find(p);
    if (it == blocks.lent.end()) return 1;
    block = std::move(it->second);
    blocks.lent.erase(it);
  }
  if (!passed) (void)cudaGetLastError();  // a broken context: the block goes back all the same
  return passed ? 0 : 1;
}

}  // namespace

NvjpegAllocators::NvjpegAllocators()
    : blocks_(std::make_unique<Blocks>()),
      device_{device_malloc, device_free, nullptr},
      pinned_{pinned_malloc, pinned_free, blocks_.get()} {}

NvjpegAllocators::~NvjpegAllocators() = default;

}  // namespace streampipe::io::detail
