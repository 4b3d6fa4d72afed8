// SPDX-License-Identifier: Apache-2.0
#pragma once
// Where an nvJPEG library handle's memory comes from (builds with nvJPEG only). nvJPEG frees
// and allocates its buffers again as image sizes change; with its own cudaFree and
// cudaFreeHost each of those waits for the whole device, so a GPU's lanes coding side by side
// stalled one another. These allocators take device memory in stream order
// (cudaMallocAsync / cudaFreeAsync on the call's stream) and page-locked memory from the
// process's PinnedPool (a freed block goes back to the pool once the call's stream has
// passed it). The hardware backend allocates on its own and ignores them
// (bench/peers/nvjpeg_batch_probe); GpuJpegBatchState reserves its buffers instead.

#include <nvjpeg.h>

#include <memory>

namespace streampipe::io::detail {

class NvjpegAllocators {
 public:
  NvjpegAllocators();
  ~NvjpegAllocators();
  NvjpegAllocators(const NvjpegAllocators&) = delete;
  NvjpegAllocators& operator=(const NvjpegAllocators&) = delete;

  // For nvjpegCreateExV2; valid while this object lives, which must outlive the handle.
  [[nodiscard]] nvjpegDevAllocatorV2_t* device() noexcept { return &device_; }
  [[nodiscard]] nvjpegPinnedAllocatorV2_t* pinned() noexcept { return &pinned_; }

  struct Blocks;

 private:
  std::unique_ptr<Blocks> blocks_;  // the page-locked blocks lent to nvJPEG, by address
  nvjpegDevAllocatorV2_t device_{};
  nvjpegPinnedAllocatorV2_t pinned_{};
};

}  // namespace streampipe::io::detail
