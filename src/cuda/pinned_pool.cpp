// SPDX-License-Identifier: Apache-2.0
#include "streampipe/cuda/pinned_pool.hpp"

#include "streampipe/cuda/pinned_buffer.hpp"

#include "numa_pinned.hpp"

#include <chrono>
#include <cstdlib>
#include <map>
#include <mutex>
#include <utility>
#include <vector>

namespace streampipe {
namespace detail {

namespace {

void free_block(void* ptr, std::size_t capacity, int numa_node) noexcept {
  if (numa_node < 0) {
    pinned_free(ptr);
  } else {
    numa_pinned_free(ptr, capacity);
  }
}

}  // namespace

struct PinnedPoolState {
  struct Victim {
    void* ptr;
    std::size_t capacity;
    int numa_node;
  };
  // (NUMA node, capacity): a node's blocks together, smallest first.
  using Key = std::pair<int, std::size_t>;

  explicit PinnedPoolState(std::size_t max_cached) : max_cached_bytes(max_cached) {}
  ~PinnedPoolState() {
    for (auto& [key, ptr] : idle) free_block(ptr, key.second, key.first);
  }

  mutable std::mutex mutex;
  std::multimap<Key, void*> idle;
  std::size_t max_cached_bytes;
  PinnedPoolStats stats;
  bool close_at_exit = false;  // the global pool; set once, before any acquire()

  // Called with the lock held; returns blocks to free once the lock is dropped.
  std::vector<Victim> evict_down_to(std::size_t keep) {
    std::vector<Victim> victims;
    while (stats.bytes_cached > keep && !idle.empty()) {
      auto last = std::prev(idle.end());
      stats.bytes_cached -= last->first.second;
      stats.blocks_cached -= 1;
      victims.push_back({last->second, last->first.second, last->first.first});
      idle.erase(last);
    }
    return victims;
  }

  void give_back(void* ptr, std::size_t capacity, int numa_node) noexcept {
    std::vector<Victim> victims;
    {
      std::lock_guard lock(mutex);
      stats.bytes_in_use -= capacity;
      try {
        idle.emplace(Key{numa_node, capacity}, ptr);
        stats.bytes_cached += capacity;
        stats.blocks_cached += 1;
        if (stats.bytes_cached > max_cached_bytes) victims = evict_down_to(max_cached_bytes);
      } catch (...) {
        free_block(ptr, capacity, numa_node);  // could not cache it: free it instead of leaking
      }
    }
    for (const auto& v : victims) free_block(v.ptr, v.capacity, v.numa_node);
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
      capacity_(std::exchange(o.capacity_, 0)),
      numa_node_(std::exchange(o.numa_node_, -1)) {}

PinnedBlock& PinnedBlock::operator=(PinnedBlock&& o) noexcept {
  if (this != &o) {
    release();
    pool_ = std::move(o.pool_);
    data_ = std::exchange(o.data_, nullptr);
    size_ = std::exchange(o.size_, 0);
    capacity_ = std::exchange(o.capacity_, 0);
    numa_node_ = std::exchange(o.numa_node_, -1);
  }
  return *this;
}

void PinnedBlock::release() noexcept {
  if (data_ != nullptr && pool_) pool_->give_back(data_, capacity_, numa_node_);
  pool_.reset();
  data_ = nullptr;
  size_ = 0;
  capacity_ = 0;
  numa_node_ = -1;
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

PinnedBlock PinnedPool::acquire(std::size_t bytes, int numa_node) {
  if (bytes == 0) return {};
  const std::size_t want = rounded_size(bytes);
  // On a host of one node there is nothing to choose: cudaMallocHost, one cache.
  const int node = numa_node >= 0 && detail::host_numa_node_count() > 1 ? numa_node : -1;
  {
    std::lock_guard lock(state_->mutex);
    auto it = state_->idle.lower_bound({node, want});
    // Reuse only blocks of the node that waste at most about half of themselves.
    if (it != state_->idle.end() && it->first.first == node && it->first.second <= 2 * want) {
      const std::size_t capacity = it->first.second;
      void* ptr = it->second;
      state_->idle.erase(it);
      state_->stats.bytes_cached -= capacity;
      state_->stats.blocks_cached -= 1;
      state_->stats.bytes_in_use += capacity;
      state_->stats.hits += 1;
      return PinnedBlock(state_, static_cast<std::byte*>(ptr), bytes, capacity, node);
    }
  }
  // Allocate outside the lock: cudaMallocHost is slow and other threads may hit the cache.
  const auto t0 = std::chrono::steady_clock::now();
  void* ptr = node < 0 ? detail::pinned_malloc(want) : detail::numa_pinned_malloc(want, node);
  const auto t1 = std::chrono::steady_clock::now();
  if (state_->close_at_exit) close_global_pool_at_exit();
  std::lock_guard lock(state_->mutex);
  state_->stats.misses += 1;
  state_->stats.bytes_in_use += want;
  state_->stats.allocation_ms += std::chrono::duration<double, std::milli>(t1 - t0).count();
  return PinnedBlock(state_, static_cast<std::byte*>(ptr), bytes, want, node);
}

PinnedPoolStats PinnedPool::stats() const {
  std::lock_guard lock(state_->mutex);
  return state_->stats;
}

void PinnedPool::trim(std::size_t keep_bytes) {
  std::vector<detail::PinnedPoolState::Victim> victims;
  {
    std::lock_guard lock(state_->mutex);
    victims = state_->evict_down_to(keep_bytes);
  }
  for (const auto& v : victims) detail::free_block(v.ptr, v.capacity, v.numa_node);
}

void PinnedPool::close() {
  std::vector<detail::PinnedPoolState::Victim> victims;
  {
    std::lock_guard lock(state_->mutex);
    state_->max_cached_bytes = 0;  // give_back() frees whatever comes back from now on
    victims = state_->evict_down_to(0);
  }
  for (const auto& v : victims) detail::free_block(v.ptr, v.capacity, v.numa_node);
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
