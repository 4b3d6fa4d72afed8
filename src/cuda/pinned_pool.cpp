// SPDX-License-Identifier: Apache-2.0
#include "streampipe/cuda/pinned_pool.hpp"

#include "streampipe/cuda/pinned_buffer.hpp"

#include <chrono>
#include <cstdlib>
#include <map>
#include <mutex>
#include <utility>
#include <vector>

namespace streampipe {
namespace detail {

struct PinnedPoolState {
  explicit PinnedPoolState(std::size_t max_cached) : max_cached_bytes(max_cached) {}
  ~PinnedPoolState() {
    for (auto& [capacity, ptr] : idle) pinned_free(ptr);
  }

  mutable std::mutex mutex;
  std::multimap<std::size_t, void*> idle;  // capacity -> block
  std::size_t max_cached_bytes;
  PinnedPoolStats stats;
  bool close_at_exit = false;  // the global pool; set once, before any acquire()

  // Called with the lock held; returns blocks to free once the lock is dropped.
  std::vector<void*> evict_down_to(std::size_t keep) {
    std::vector<void*> victims;
    while (stats.bytes_cached > keep && !idle.empty()) {
      auto largest = std::prev(idle.end());
      stats.bytes_cached -= largest->first;
      stats.blocks_cached -= 1;
      victims.push_back(largest->second);
      idle.erase(largest);
    }
    return victims;
  }

  void give_back(void* ptr, std::size_t capacity) noexcept {
    std::vector<void*> victims;
    {
      std::lock_guard lock(mutex);
      stats.bytes_in_use -= capacity;
      try {
        idle.emplace(capacity, ptr);
        stats.bytes_cached += capacity;
        stats.blocks_cached += 1;
        if (stats.bytes_cached > max_cached_bytes) victims = evict_down_to(max_cached_bytes);
      } catch (...) {
        victims.push_back(ptr);  // could not cache it: free it instead of leaking
      }
    }
    for (void* v : victims) pinned_free(v);
  }
};

}  // namespace detail

namespace {

// Registered after the global pool's first cudaMallocHost succeeded: the runtime had set up
// its own teardown by then, and exit hooks run in reverse order, so this one runs first,
// while cudaFreeHost still works.
void close_global_pool_at_exit() {
  static std::once_flag once;
  std::call_once(once, [] { std::atexit([] { PinnedPool::global().close(); }); });
}

}  // namespace

PinnedBlock::PinnedBlock(PinnedBlock&& o) noexcept
    : pool_(std::move(o.pool_)),
      data_(std::exchange(o.data_, nullptr)),
      size_(std::exchange(o.size_, 0)),
      capacity_(std::exchange(o.capacity_, 0)) {}

PinnedBlock& PinnedBlock::operator=(PinnedBlock&& o) noexcept {
  if (this != &o) {
    release();
    pool_ = std::move(o.pool_);
    data_ = std::exchange(o.data_, nullptr);
    size_ = std::exchange(o.size_, 0);
    capacity_ = std::exchange(o.capacity_, 0);
  }
  return *this;
}

void PinnedBlock::release() noexcept {
  if (data_ != nullptr && pool_) pool_->give_back(data_, capacity_);
  pool_.reset();
  data_ = nullptr;
  size_ = 0;
  capacity_ = 0;
}

PinnedPool::PinnedPool(std::size_t max_cached_bytes)
    : state_(std::make_shared<detail::PinnedPoolState>(max_cached_bytes)) {}

PinnedPool::~PinnedPool() = default;

std::size_t PinnedPool::rounded_size(std::size_t bytes) noexcept {
  constexpr std::size_t kSmallStep = std::size_t{64} << 10;
  constexpr std::size_t kLargeStep = std::size_t{2} << 20;
  constexpr std::size_t kLargeFrom = std::size_t{16} << 20;
  const std::size_t step = bytes < kLargeFrom ? kSmallStep : kLargeStep;
  return (bytes + step - 1) / step * step;
}

PinnedBlock PinnedPool::acquire(std::size_t bytes) {
  if (bytes == 0) return {};
  const std::size_t want = rounded_size(bytes);
  {
    std::lock_guard lock(state_->mutex);
    auto it = state_->idle.lower_bound(want);
    // Reuse only blocks that waste at most about half of themselves.
    if (it != state_->idle.end() && it->first <= 2 * want) {
      const std::size_t capacity = it->first;
      void* ptr = it->second;
      state_->idle.erase(it);
      state_->stats.bytes_cached -= capacity;
      state_->stats.blocks_cached -= 1;
      state_->stats.bytes_in_use += capacity;
      state_->stats.hits += 1;
      return PinnedBlock(state_, static_cast<std::byte*>(ptr), bytes, capacity);
    }
  }
  // Allocate outside the lock: cudaMallocHost is slow and other threads may hit the cache.
  const auto t0 = std::chrono::steady_clock::now();
  void* ptr = detail::pinned_malloc(want);
  const auto t1 = std::chrono::steady_clock::now();
  if (state_->close_at_exit) close_global_pool_at_exit();
  std::lock_guard lock(state_->mutex);
  state_->stats.misses += 1;
  state_->stats.bytes_in_use += want;
  state_->stats.allocation_ms += std::chrono::duration<double, std::milli>(t1 - t0).count();
  return PinnedBlock(state_, static_cast<std::byte*>(ptr), bytes, want);
}

PinnedPoolStats PinnedPool::stats() const {
  std::lock_guard lock(state_->mutex);
  return state_->stats;
}

void PinnedPool::trim(std::size_t keep_bytes) {
  std::vector<void*> victims;
  {
    std::lock_guard lock(state_->mutex);
    victims = state_->evict_down_to(keep_bytes);
  }
  for (void* v : victims) detail::pinned_free(v);
}

void PinnedPool::close() {
  std::vector<void*> victims;
  {
    std::lock_guard lock(state_->mutex);
    state_->max_cached_bytes = 0;  // give_back() frees whatever comes back from now on
    victims = state_->evict_down_to(0);
  }
  for (void* v : victims) detail::pinned_free(v);
}

PinnedPool& PinnedPool::global() {
  static auto* pool = [] {
    auto* p = new PinnedPool();
    p->state_->close_at_exit = true;
    return p;
  }();
  return *pool;
}

}  // namespace streampipe
