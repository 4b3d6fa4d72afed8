// SPDX-License-Identifier: Apache-2.0
#pragma once
// Batch forming: which items may share a slot, and whether the next one fits the batch
// being filled. A batch holds at most `items` items, and its inputs, packed as
// layout_inputs() packs them (each at a multiple of kItemAlign), end within `bytes`; the
// padding after the last one does not count. Pure: no threads, no locks.

#include "slot_layout.hpp"

#include <cstddef>

namespace streampipe::pipeline::detail {

struct BatchLimits {
  std::size_t items = 1;  // EngineOptions::batch_items
  std::size_t bytes = 0;  // EngineOptions::batch_bytes
};

// Whether an item may be packed with others at all: batching is on, its input size is
// known at submission (no produce stage), and it fits an empty batch.
[[nodiscard]] constexpr bool batchable(const BatchLimits& limits, std::size_t in_bytes, bool produce) noexcept {
  return limits.items > 1 && !produce && in_bytes <= limits.bytes;
}

// The batch being filled. An empty one takes any batchable item.
class BatchFill {
 public:
  constexpr explicit BatchFill(BatchLimits limits) noexcept : limits_(limits) {}

  // Whether an input of in_bytes may join: room for one more item, and it ends within bytes.
  [[nodiscard]] constexpr bool fits(std::size_t in_bytes) const noexcept {
    return items_ < limits_.items && cursor_ + in_bytes <= limits_.bytes;
  }
  // Adds one item; fits(in_bytes) must hold.
  constexpr void add(std::size_t in_bytes) noexcept {
    cursor_ = align_item(cursor_ + in_bytes);
    ++items_;
  }
  // No more items may join: the batch should go.
  [[nodiscard]] constexpr bool full() const noexcept { return items_ >= limits_.items; }
  [[nodiscard]] constexpr std::size_t items() const noexcept { return items_; }
  // Where the next input would start.
  [[nodiscard]] constexpr std::size_t cursor() const noexcept { return cursor_; }
  constexpr void clear() noexcept { items_ = cursor_ = 0; }
  [[nodiscard]] constexpr const BatchLimits& limits() const noexcept { return limits_; }

 private:
  BatchLimits limits_;
  std::size_t items_ = 0;
  std::size_t cursor_ = 0;
};

}  // namespace streampipe::pipeline::detail
