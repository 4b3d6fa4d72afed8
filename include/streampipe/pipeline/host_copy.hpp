// SPDX-License-Identifier: Apache-2.0
#pragma once
// Host-side copies into and out of pinned staging memory. Staging pageable data is the
// pipeline's host bottleneck: one thread's memcpy reaches a fraction of the PCIe link, so
// a slot's copies are cut into pieces spread over worker threads (copy_ranges). Copies into
// staging use plain stores, which keep the reused staging memory in the last-level cache
// where the DMA engine reads it; copies out to the caller's memory use streaming stores.

#include "streampipe/pipeline/parts.hpp"

#include <cstddef>
#include <functional>
#include <memory>
#include <span>
#include <vector>

namespace streampipe::pipeline {

// memcpy semantics; streaming stores for large copies where the CPU has them.
void streaming_copy(void* dst, const void* src, std::size_t bytes) noexcept;

struct CopyRange {
  void* dst = nullptr;
  const void* src = nullptr;
  std::size_t bytes = 0;
};

// Below this many bytes a call's ranges are copied by the caller alone: waking helpers would
// cost more than it saves.
inline constexpr std::size_t kParallelCopyMin = std::size_t{512} << 10;

// How the destination is written. `cached` (plain stores) for pinned staging that the DMA
// engine reads next: it stays in the last-level cache. `streaming` (non-temporal stores) for
// the caller's pageable output: nothing reads it soon, and plain stores would first read
// every destination line from DRAM.
enum class CopyStore { cached, streaming };

// Copies `ranges` and returns once they are copied. From kParallelCopyMin bytes they are cut
// into pieces small enough that every thread of `parts` gets about two, run as parts (oldest
// call first: one slot's staging runs on all the threads and finishes before the next
// slot's, instead of eight slots crawling side by side and all finishing late).
void copy_ranges(PartQueue& parts, std::span<const CopyRange> ranges, CopyStore store);

// The piece size copy_ranges uses for `total` bytes over `threads` threads: about
// total / (2 * threads), within [128 KiB, 2 MiB], a multiple of 4 KiB.
[[nodiscard]] std::size_t copy_piece_bytes(std::size_t total, int threads) noexcept;

struct HostCopyFigure {
  int threads = 1;
  bool streaming = false;
  double gbps = 0;  // median
};

// Measures pageable -> pinned copy bandwidth of this host for 1 and `threads` threads, with
// plain memcpy and streaming stores (median of `runs` over `bytes`).
[[nodiscard]] std::vector<HostCopyFigure> measure_host_copy(std::size_t bytes, int threads, int runs);

}  // namespace streampipe::pipeline
