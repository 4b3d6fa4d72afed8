// SPDX-License-Identifier: Apache-2.0
#pragma once
// What a soak run samples of its own process: resident memory and threads (Linux /proc),
// pinned host memory (the process-wide pinned pool: cached and on lease) and device memory
// in use (the whole GPU's, as cudaMemGetInfo reports it; the soak runs alone on it).

#include <cstddef>

namespace streampipe::bench::soak {

// Resident set size in bytes (/proc/self/statm). Throws std::runtime_error when unreadable.
[[nodiscard]] std::size_t resident_bytes();
// Threads of this process (entries of /proc/self/task). Throws std::runtime_error when unreadable.
[[nodiscard]] std::size_t thread_count();
// Bytes of PinnedPool::global(), idle and lent.
[[nodiscard]] std::size_t pinned_bytes();
// Bytes in use on GPU `device`; throws CudaError.
[[nodiscard]] std::size_t device_used_bytes(int device);

}  // namespace streampipe::bench::soak
