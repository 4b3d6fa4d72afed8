#pragma once
// Host-side copies into and out of pinned staging memory. Staging pageable data is the
// pipeline's host bottleneck: one thread's memcpy reaches a fraction of the PCIe link, so
// large copies are split into pieces spread over worker threads, and written with
// non-temporal (streaming) stores on x86-64, which skip reading the destination into the
// cache first (the DMA engine, not the CPU, reads staging memory next).

#include <cstddef>
#include <functional>
#include <vector>

namespace streampipe::pipeline {

// memcpy semantics; streaming stores for large copies where the CPU has them.
void streaming_copy(void* dst, const void* src, std::size_t bytes) noexcept;

// Runs body(first, last) over [0, bytes) in pieces of about piece_bytes, on `helpers` extra
// threads obtained through `spawn` (each called with a task to run) plus the calling thread,
// which claims pieces too, so it never waits on a piece nobody has started.
void split_work(std::size_t bytes, std::size_t piece_bytes, int helpers,
                const std::function<void(std::function<void()>)>& spawn,
                const std::function<void(std::size_t, std::size_t)>& body);

struct HostCopyFigure {
  int threads = 1;
  bool streaming = false;
  double gbps = 0;  // median
};

// Measures pageable -> pinned copy bandwidth of this host for 1 and `threads` threads, with
// plain memcpy and streaming stores (median of `runs` over `bytes`).
[[nodiscard]] std::vector<HostCopyFigure> measure_host_copy(std::size_t bytes, int threads, int runs);

}  // namespace streampipe::pipeline
