// SPDX-License-Identifier: Apache-2.0
#pragma once
// In-order delivery: values arrive keyed by submission index in any order, and leave in
// index order, each once, as soon as every earlier one has left. A ring indexed by the
// distance from the next index to deliver: no allocation per value once it has grown to
// the widest spread of indices in flight (the engine's slots bound it). Pure: no locks;
// the caller serializes push and pop.
//
//   buffer.push(index, std::move(value));
//   while (auto next = buffer.pop()) deliver(std::move(*next));

#include <algorithm>
#include <bit>
#include <cstddef>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace streampipe::pipeline::detail {

template <typename T>
class ReorderBuffer {
 public:
  // Holds `value` until every index before `index` has been popped. Throws
  // std::logic_error when `index` was pushed before (delivered or waiting), and
  // std::length_error (or std::bad_alloc) when it cannot be held; either way nothing
  // changes, `value` included: it is moved from only once it is held.
  template <typename U>
  void push(std::size_t index, U&& value) {
    if (index < next_)
      throw std::logic_error("ReorderBuffer: index " + std::to_string(index) + " was already delivered");
    const std::size_t ahead = index - next_;
    if (ahead >= ring_.size()) grow(ahead);
    std::optional<T>& cell = ring_[(head_ + ahead) & (ring_.size() - 1)];
    if (cell) throw std::logic_error("ReorderBuffer: index " + std::to_string(index) + " was pushed twice");
    cell.emplace(std::forward<U>(value));
    ++held_;
  }

  // The value of index next() once it has arrived, else nullopt.
  [[nodiscard]] std::optional<T> pop() {
    if (held_ == 0 || !ring_[head_]) return std::nullopt;
    std::optional<T> out(std::move(ring_[head_]));
    ring_[head_].reset();
    head_ = (head_ + 1) & (ring_.size() - 1);
    ++next_;
    --held_;
    return out;
  }

  [[nodiscard]] std::size_t next() const noexcept { return next_; }  // the index pop() waits for
  [[nodiscard]] std::size_t held() const noexcept { return held_; }  // values waiting

 private:
  // Room for index next_ + ahead; the size stays a power of two so a mask wraps the ring.
  void grow(std::size_t ahead) {
    if (ahead >= ring_.max_size() / 2)
      throw std::length_error("ReorderBuffer: index " + std::to_string(next_ + ahead) + " lies too far ahead");
    const std::size_t size = std::bit_ceil(std::max<std::size_t>({ahead + 1, 2 * ring_.size(), 16}));
    std::vector<std::optional<T>> grown(size);
    for (std::size_t k = 0; k < ring_.size(); ++k) grown[k] = std::move(ring_[(head_ + k) & (ring_.size() - 1)]);
    ring_ = std::move(grown);
    head_ = 0;
  }

  std::vector<std::optional<T>> ring_;  // ring_[(head_ + k) & mask] holds index next_ + k
  std::size_t head_ = 0;
  std::size_t next_ = 0;
  std::size_t held_ = 0;
};

}  // namespace streampipe::pipeline::detail
