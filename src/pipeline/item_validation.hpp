// SPDX-License-Identifier: Apache-2.0
#pragma once
// The rules an item must meet at submit(), checked before anything is allocated for it,
// and how errors name an item and what went wrong. Pure: no threads, no locks.

#include "streampipe/pipeline/item.hpp"
#include "streampipe/pipeline/operation.hpp"

#include <cstddef>
#include <exception>
#include <string>

namespace streampipe::pipeline::detail {

// "item 3", or "item 3 (label)" when the item has a label.
[[nodiscard]] std::string item_name(std::size_t index, const std::string& label);

// Throws std::invalid_argument, its message starting with item_name(), when `item` cannot
// run through `op`: work not positive and finite, a work kind out of range, both or neither
// of an input span and a produce stage; both an output span and a consume stage; a consume
// stage on a span input without op.output_bytes; an output span whose size differs from
// op.output_bytes(input size), or is empty where that is not 0. Returns the item's output
// bytes where submission knows them: the output span's size, or op.output_bytes(input size)
// for a consume stage on a span input; 0 for a produce item, which declares its own when it
// allocates. Calls op.output_bytes at most once and lets what it throws through: the engine
// asks here, before it counts the item, so that an operation refusing an input size refuses
// the item at submit() and leaves nothing pending.
[[nodiscard]] std::size_t validate_item(const Item& item, std::size_t index, const Operation& op);

// The item's kind of work for the choice of device: Item::work_kind, or 0 for a kind out of
// range (which validate_item refuses; the engine may ask before it validates).
[[nodiscard]] std::size_t kind_of(const Item& item) noexcept;

// What an exception says: its what(), or "unknown exception".
[[nodiscard]] std::string describe_exception(const std::exception_ptr& e);

}  // namespace streampipe::pipeline::detail
