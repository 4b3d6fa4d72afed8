// SPDX-License-Identifier: Apache-2.0
#pragma once
// Host-side copies into and out of pinned staging memory. Staging pageable data is the
// pipeline's host bottleneck: one thread's memcpy reaches a fraction of the PCIe link, so
// a slot's copies are cut into pieces spread over worker threads (CopyQueue). Copies into
// staging use plain stores, which keep the reused staging memory in the last-level cache
// where the DMA engine reads it; copies out to the caller's memory use streaming stores.

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

// Copies ranges for many callers at once, oldest call first. Each call's ranges are cut
// into pieces small enough that every thread gets about two, and every thread that takes
// part (callers and spawned helpers alike) copies the next piece of the OLDEST unfinished
// call: one slot's staging then runs on all the threads and finishes before the next
// slot's, instead of eight slots crawling side by side and all finishing late (the lane
// waiting for its slot sees the sum of them). A call returns once its own pieces are copied.
// Below kParallelCopyMin bytes, or with no helpers, the caller copies alone: waking helpers
// would cost more than it saves.
inline constexpr std::size_t kParallelCopyMin = std::size_t{512} << 10;

class CopyQueue {
 public:
  using Spawn = std::function<void(std::function<void()>)>;
  // `helpers`: at most this many extra threads per call, obtained through `spawn`.
  CopyQueue(int helpers, Spawn spawn);
  ~CopyQueue();
  CopyQueue(const CopyQueue&) = delete;
  CopyQueue& operator=(const CopyQueue&) = delete;

  // How the destination is written. `cached` (plain stores) for pinned staging that the DMA
  // engine reads next: it stays in the last-level cache. `streaming` (non-temporal stores)
  // for the caller's pageable output: nothing reads it soon, and plain stores would first
  // read every destination line from DRAM.
  enum class Store { cached, streaming };
  void copy(std::span<const CopyRange> ranges, Store store);

  struct State;

 private:
  int helpers_;
  Spawn spawn_;
  std::shared_ptr<State> state_;  // shared: a helper may run after its call returned
};

// The piece size CopyQueue uses for `total` bytes over `threads` threads: about
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
