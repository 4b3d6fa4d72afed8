// SPDX-License-Identifier: Apache-2.0
#include "staging_pool.hpp"

#include <algorithm>
#include <stdexcept>

namespace streampipe::pipeline::detail {

StagingPool::StagingPool(bool pinned, std::size_t budget, int slots, WaitInputs wait_inputs, int numa_node,
                         std::optional<HostResourceRef> memory, int device)
    : pinned_(pinned),
      numa_node_(numa_node),
      memory_(memory),
      device_(device),
      budget_(budget),
      wait_inputs_(std::move(wait_inputs)) {
  if (budget_ == 0)
    for (int i = 0; i < slots; ++i) blocks_.push_back(std::make_unique<Block>(pinned_, numa_node_, memory_, device_));
}

std::optional<StagingPool::Lease> StagingPool::acquire(std::size_t bytes, int slot) {
  std::unique_lock lock(mutex_);
  for (;;) {
    if (stopped_) return std::nullopt;
    if (budget_ == 0 || lent_.empty() || lent_bytes_ + bytes <= budget_) break;
    // The oldest block whose copies are enqueued and that nobody else waits for: its copies
    // finish first on the lanes (each lane's stream runs in order), so waiting for it frees
    // budget soonest.
    Block* oldest = nullptr;
    int oldest_id = -1;
    for (const int id : lent_) {
      Block& b = *blocks_[static_cast<std::size_t>(id)];
      if (b.state == State::fenced && !b.awaited) {
        oldest = &b;
        oldest_id = id;
        break;
      }
    }
    if (oldest == nullptr) {  // all lent blocks are still being filled or enqueued
      changed_.wait(lock);
      continue;
    }
    oldest->awaited = true;
    const std::uint64_t generation = oldest->generation;
    const int owner = oldest->slot;
    lock.unlock();
    try {
      wait_inputs_(owner);
    } catch (...) {
      lock.lock();
      if (oldest->generation == generation) oldest->awaited = false;
      throw;
    }
    lock.lock();
    // Unless the slot's completion gave the block back meanwhile, the DMA has read it.
    if (oldest->generation == generation) take_back(*oldest, oldest_id);
  }
  return lend(bytes, slot, lock);
}

StagingPool::Lease StagingPool::acquire_now(std::size_t bytes, int slot) {
  std::unique_lock lock(mutex_);
  return lend(bytes, slot, lock);
}

StagingPool::Lease StagingPool::lend(std::size_t bytes, int slot, std::unique_lock<std::mutex>& lock) {
  int id = -1;
  if (budget_ == 0) {
    id = slot;
    if (slot < 0 || static_cast<std::size_t>(slot) >= blocks_.size())
      throw std::logic_error("staging requested for a slot the pool was not made for");
    if (blocks_[static_cast<std::size_t>(id)]->state != State::free)
      throw std::logic_error("a slot's own staging block was requested twice");
  } else if (!free_.empty()) {
    // The most recently returned block is the likeliest to still be in the cache; one that
    // is already large enough saves growing another.
    auto it = std::find_if(free_.rbegin(), free_.rend(), [&](int b) {
      return blocks_[static_cast<std::size_t>(b)]->buffer.capacity() >= bytes;
    });
    if (it == free_.rend()) it = free_.rbegin();
    id = *it;
    free_.erase(std::next(it).base());
  } else {
    id = static_cast<int>(blocks_.size());
    blocks_.push_back(std::make_unique<Block>(pinned_, numa_node_, memory_, device_));
  }
  Block& b = *blocks_[static_cast<std::size_t>(id)];
  b.state = State::lent;
  b.slot = slot;
  b.bytes = bytes;
  b.awaited = false;
  lent_.push_back(id);
  lent_bytes_ += bytes;
  const std::size_t peak_before = peak_bytes_;
  peak_bytes_ = std::max(peak_bytes_, lent_bytes_);
  const Lease lease{id, b.generation, nullptr};
  // Growing may allocate pinned memory (milliseconds): outside the lock. The block is this
  // caller's alone until it is given back, and its address is stable (blocks_ holds pointers).
  lock.unlock();
  try {
    b.buffer.reserve(bytes);
  } catch (...) {
    // No pinned memory left, say: nothing was lent. A block left lent would never be
    // fenced, and acquire() would wait for it forever.
    lock.lock();
    take_back(b, id);
    peak_bytes_ = std::max(peak_before, lent_bytes_);  // what was lent, not what was asked for
    throw;
  }
  return {lease.block, lease.generation, b.buffer.data()};
}

void StagingPool::take_back(Block& b, int id) {
  b.state = State::free;
  b.awaited = false;
  ++b.generation;
  lent_bytes_ -= b.bytes;
  b.bytes = 0;
  lent_.erase(std::find(lent_.begin(), lent_.end(), id));
  if (budget_ != 0) free_.push_back(id);
  changed_.notify_all();
}

StagingPool::Block* StagingPool::current(const Lease& lease) {
  if (!lease || static_cast<std::size_t>(lease.block) >= blocks_.size()) return nullptr;
  Block& b = *blocks_[static_cast<std::size_t>(lease.block)];
  return b.generation == lease.generation && b.state != State::free ? &b : nullptr;
}

void StagingPool::fence(const Lease& lease) {
  std::lock_guard lock(mutex_);
  if (Block* b = current(lease); b != nullptr && b->state == State::lent) {
    b->state = State::fenced;
    changed_.notify_all();
  }
}

void StagingPool::release(const Lease& lease) {
  std::lock_guard lock(mutex_);
  if (Block* b = current(lease)) take_back(*b, lease.block);
}

void StagingPool::stop() {
  {
    std::lock_guard lock(mutex_);
    stopped_ = true;
  }
  changed_.notify_all();
}

std::size_t StagingPool::peak_bytes() const {
  std::lock_guard lock(mutex_);
  return peak_bytes_;
}

}  // namespace streampipe::pipeline::detail
