// SPDX-License-Identifier: Apache-2.0
#pragma once
// A thread-safe pool of page-locked host blocks. cudaMallocHost of 1 GiB takes about half a
// second, so staging memory is allocated once and reused: acquire() hands out a PinnedBlock
// lease that goes back to the pool when destroyed. A request reuses a cached block at least
// as large and at most about twice as large; otherwise a new block is allocated. Cached
// bytes above `max_cached_bytes` are freed as blocks come back.

#include <cstddef>
#include <memory>
#include <span>

namespace streampipe {

namespace detail {
struct PinnedPoolState;
}

class PinnedBlock {
 public:
  PinnedBlock() = default;
  ~PinnedBlock() { release(); }
  PinnedBlock(PinnedBlock&& o) noexcept;
  PinnedBlock& operator=(PinnedBlock&& o) noexcept;
  PinnedBlock(const PinnedBlock&) = delete;
  PinnedBlock& operator=(const PinnedBlock&) = delete;

  [[nodiscard]] std::byte* data() const noexcept { return data_; }
  [[nodiscard]] std::size_t size() const noexcept { return size_; }          // as requested
  [[nodiscard]] std::size_t capacity() const noexcept { return capacity_; }  // as allocated
  [[nodiscard]] std::span<std::byte> bytes() const noexcept { return {data_, size_}; }
  template <typename T>
  [[nodiscard]] std::span<T> as() const noexcept {
    return {reinterpret_cast<T*>(data_), size_ / sizeof(T)};
  }
  [[nodiscard]] explicit operator bool() const noexcept { return data_ != nullptr; }
  void release() noexcept;  // returns the block to its pool now

 private:
  friend class PinnedPool;
  PinnedBlock(std::shared_ptr<detail::PinnedPoolState> pool, std::byte* data, std::size_t size,
              std::size_t capacity, int numa_node) noexcept
      : pool_(std::move(pool)), data_(data), size_(size), capacity_(capacity), numa_node_(numa_node) {}

  std::shared_ptr<detail::PinnedPoolState> pool_;
  std::byte* data_ = nullptr;
  std::size_t size_ = 0;
  std::size_t capacity_ = 0;
  int numa_node_ = -1;  // the node its pages were bound to; -1: cudaMallocHost's choice
};

struct PinnedPoolStats {
  std::size_t hits = 0;             // requests served from cache
  std::size_t misses = 0;           // requests that allocated
  std::size_t bytes_cached = 0;     // idle bytes held for reuse
  std::size_t bytes_in_use = 0;     // bytes out on lease
  std::size_t blocks_cached = 0;
  double allocation_ms = 0.0;       // total host time spent in cudaMallocHost
};

class PinnedPool {
 public:
  static constexpr std::size_t kUnlimited = static_cast<std::size_t>(-1);
  explicit PinnedPool(std::size_t max_cached_bytes = kUnlimited);
  ~PinnedPool();  // frees cached blocks; blocks still on lease are freed when they return
  PinnedPool(const PinnedPool&) = delete;
  PinnedPool& operator=(const PinnedPool&) = delete;

  // A block of at least `bytes`. With `numa_node` >= 0 on a host of several NUMA nodes, its
  // pages lie on that node (the one nearest a GPU: Device::host_numa_node()), and only
  // blocks of that node are reused for it; elsewhere the node is ignored. Throws CudaError
  // when no pinned memory is left.
  [[nodiscard]] PinnedBlock acquire(std::size_t bytes, int numa_node = -1);
  [[nodiscard]] PinnedPoolStats stats() const;
  void trim(std::size_t keep_bytes = 0);  // frees idle blocks until at most keep_bytes remain
  // Frees the idle blocks now, and from then on every block as it comes back instead of
  // caching it; acquire() still works, uncached. Idempotent. What global() does at exit.
  void close();

  // The process-wide pool that the engine and tools share. The object is never destroyed
  // (a block on lease may come back from a static destructor, after the pool's would have
  // run), but it is closed at exit, before the CUDA runtime unloads: after its first
  // allocation has initialized the runtime it registers an exit hook (std::atexit), and
  // hooks run in the reverse order of registration. So every pinned block is freed by the
  // end of the program (compute-sanitizer's leak check finds none); one still on lease then
  // is freed when it comes back. Call close() earlier to give the memory back sooner.
  static PinnedPool& global();

  // The size a request is rounded to (64 KiB steps below 16 MiB, 2 MiB steps above).
  [[nodiscard]] static std::size_t rounded_size(std::size_t bytes) noexcept;

 private:
  std::shared_ptr<detail::PinnedPoolState> state_;
};

}  // namespace streampipe
