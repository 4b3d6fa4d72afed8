// SPDX-License-Identifier: Apache-2.0
#pragma once
// The host staging blocks that a slot's input is copied into before the DMA reads it:
// pinned blocks from the process-wide pool on the GPU backend, plain memory on the host
// backend. A block is lent to a slot from the copy into it until the lane's copies in have
// read it (not until the slot completes), and only `budget` bytes are lent at once: a ring
// that small stays in the CPU's last-level cache, where the staging threads write it and
// the DMA engine reads it (docs/engine.md, "Staging ring" under "Measured", has the runs
// that chose the default budget).
//
// When the budget is spent, acquire() waits for the copies in of the oldest lent block
// (through the WaitInputs the engine supplies) and takes that block back itself, so
// lending never depends on a slot's completion thread, which may be running a callback.
// With budget 0 every slot keeps a block of its own for good: addresses then stay stable,
// which graph replay needs.

#include "staging_buffer.hpp"

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

namespace streampipe::pipeline::detail {

class StagingPool {
 public:
  // A block lent to a slot. Stale once the block was taken back: every call checks.
  struct Lease {
    int block = -1;
    std::uint64_t generation = 0;
    std::byte* data = nullptr;
    explicit operator bool() const noexcept { return block >= 0; }
  };
  // Blocks until the copies in last enqueued for `slot` have finished reading host memory.
  using WaitInputs = std::function<void(int slot)>;

  // Pinned blocks come from `memory` when given, else from the process-wide pool on
  // `numa_node` where the host has several (PinnedPool::acquire).
  // Pinned blocks are allocated with GPU `device` current (-1: the calling thread's).
  StagingPool(bool pinned, std::size_t budget, int slots, WaitInputs wait_inputs, int numa_node = -1,
              std::optional<HostResourceRef> memory = {}, int device = -1);
  StagingPool(const StagingPool&) = delete;
  StagingPool& operator=(const StagingPool&) = delete;

  // A block of at least `bytes` for `slot`, waiting while the budget is spent (one lease
  // is always granted, whatever its size). std::nullopt once stop() was called. Rethrows
  // what WaitInputs threw, and what growing the block threw (CudaError when no pinned memory
  // is left, std::bad_alloc): then nothing is lent.
  [[nodiscard]] std::optional<Lease> acquire(std::size_t bytes, int slot);
  // The same without waiting: for produce stages, which decode on many threads at once and
  // must not be held back to the copies' budget. Counts against the budget all the same.
  [[nodiscard]] Lease acquire_now(std::size_t bytes, int slot);
  // The copies reading the block are enqueued on the slot's lane: acquire() may wait for them.
  void fence(const Lease& lease);
  // Gives the block back (nothing if acquire() already took it back).
  void release(const Lease& lease);
  // Wakes every waiter; later acquire() calls return std::nullopt.
  void stop();

  [[nodiscard]] std::size_t budget() const noexcept { return budget_; }
  [[nodiscard]] std::size_t peak_bytes() const;  // most bytes lent at once so far

 private:
  enum class State { free, lent, fenced };
  struct Block {
    StagingBuffer buffer;
    State state = State::free;
    int slot = -1;
    std::size_t bytes = 0;          // lent size, counted against the budget
    std::uint64_t generation = 1;   // bumped when the block comes back
    bool awaited = false;           // an acquire() is waiting for its copies
    Block(bool pinned, int numa_node, std::optional<HostResourceRef> memory, int device)
        : buffer(pinned, numa_node, memory, device) {}
  };

  // Lends a block under `lock`, which it releases before growing the block.
  Lease lend(std::size_t bytes, int slot, std::unique_lock<std::mutex>& lock);
  void take_back(Block& b, int id);         // under mutex_
  [[nodiscard]] Block* current(const Lease& lease);  // under mutex_; null when stale

  bool pinned_;
  int numa_node_;
  std::optional<HostResourceRef> memory_;
  int device_;
  std::size_t budget_;
  WaitInputs wait_inputs_;
  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<std::unique_ptr<Block>> blocks_;  // budget 0: block i belongs to slot i
  std::vector<int> free_;                       // most recently returned last
  std::deque<int> lent_;                        // in lending order
  std::size_t lent_bytes_ = 0, peak_bytes_ = 0;
  bool stopped_ = false;
};

}  // namespace streampipe::pipeline::detail
