// SPDX-License-Identifier: Apache-2.0
#pragma once
// Page-locked host memory on a chosen NUMA node: anonymous pages bound to the node
// (mbind, MPOL_PREFERRED: another node when that one is full) and touched there, then
// registered with CUDA. cudaMallocHost gives no say in where its pages lie; on a host with
// several sockets, staging next to a GPU's socket keeps its DMA off the link between them.

#include <cstddef>

namespace streampipe::detail {

// NUMA nodes with memory on this host (1 where the kernel has no NUMA), read once.
[[nodiscard]] int host_numa_node_count() noexcept;

// `bytes` of pinned memory preferring `node`. Throws CudaError when registering fails,
// std::bad_alloc when no pages are left, std::invalid_argument for a negative node.
[[nodiscard]] void* numa_pinned_malloc(std::size_t bytes, int node);
// Frees what numa_pinned_malloc returned, given its size.
void numa_pinned_free(void* ptr, std::size_t bytes) noexcept;

}  // namespace streampipe::detail
