// SPDX-License-Identifier: Apache-2.0
#pragma once
// Instantiated CUDA graphs kept under a key that says what they captured (a batch's shape,
// its layout, its addresses): captured once on a miss, replayed on every hit. The engine's
// lanes keep one graph per slot (its last layout); the batcher's executor one per bucket and
// slot, captured up front. Not thread-safe: one lane's thread uses it.

#include "streampipe/cuda/graph.hpp"
#include "streampipe/cuda/stream.hpp"

#include <cstddef>
#include <limits>
#include <stdexcept>
#include <utility>
#include <vector>

namespace streampipe {

template <typename Key>  // equality-comparable and copyable
class GraphCache {
 public:
  static constexpr std::size_t kUnbounded = std::numeric_limits<std::size_t>::max();

  // Keeps at most `capacity` graphs (at least 1): a capture beyond it drops the oldest.
  explicit GraphCache(std::size_t capacity = kUnbounded) : capacity_(capacity) {
    if (capacity_ == 0) throw std::invalid_argument("GraphCache: capacity must be at least 1");
  }

  // The graph captured under `key`, or null. Never throws (but what Key's == throws).
  [[nodiscard]] const GraphExec* find(const Key& key) const {
    for (const auto& entry : entries_)
      if (entry.first == key) return &entry.second;
    return nullptr;
  }

  // Captures what `enqueue()` enqueues on `stream` (nothing runs: capture only records),
  // instantiates it and keeps it under `key`, replacing a graph of the same key. What
  // enqueue() or CUDA throws passes through, the capture discarded and the cache unchanged.
  template <typename Enqueue>
  const GraphExec& capture(const Key& key, StreamRef stream, Enqueue&& enqueue) {
    Graph graph;
    {
      GraphCapture capturing(stream);
      std::forward<Enqueue>(enqueue)();
      graph = capturing.end();
    }
    GraphExec exec(graph);
    for (auto& entry : entries_)
      if (entry.first == key) {
        entry.second = std::move(exec);
        return entry.second;
      }
    if (entries_.size() >= capacity_) entries_.erase(entries_.begin());
    entries_.emplace_back(key, std::move(exec));
    return entries_.back().second;
  }

  // Launches the graph of `key` on `stream`: true, or false (nothing enqueued) on a miss.
  // Throws CudaError when the launch fails.
  bool replay(const Key& key, StreamRef stream) const {
    const GraphExec* graph = find(key);
    if (graph == nullptr) return false;
    graph->launch(stream);
    return true;
  }

  [[nodiscard]] std::size_t size() const noexcept { return entries_.size(); }
  void clear() noexcept { entries_.clear(); }

 private:
  std::size_t capacity_;
  std::vector<std::pair<Key, GraphExec>> entries_;
};

}  // namespace streampipe
