// SPDX-License-Identifier: Apache-2.0
#include "host_stages.hpp"

#include "parts_scope.hpp"

#include <fmt/format.h>

#include <stdexcept>

namespace streampipe::pipeline::detail {
namespace {

// Handed to Item::produce: the item's input takes the slot's staging from its start.
class SlotStagingInput final : public StagingInput {
 public:
  SlotStagingInput(Slot& slot, ItemPlacement& place, StagingPool& pool) : slot_(slot), place_(place), pool_(pool) {}
  std::span<std::byte> allocate(std::size_t in_bytes, std::size_t out_bytes) override {
    if (allocated_) throw std::logic_error("StagingInput::allocate() called twice for one item");
    if (in_bytes == 0) throw std::invalid_argument("produce() allocated an empty input");
    if (slot_.in_stage) throw std::logic_error("a produce item shares its slot's staging");
    allocated_ = true;
    place_.in_offset = 0;
    place_.in_bytes = in_bytes;
    place_.out_bytes = out_bytes;
    // Not acquire(): produce stages decode on many threads at once and must not be held
    // back to the copies' budget.
    slot_.in_stage = pool_.acquire_now(in_bytes, slot_.id);
    return {slot_.in_stage.data, in_bytes};
  }
  [[nodiscard]] bool runs_host_form() const noexcept override { return slot_.host_form; }
  [[nodiscard]] bool allocated() const noexcept { return allocated_; }

 private:
  Slot& slot_;
  ItemPlacement& place_;
  StagingPool& pool_;
  bool allocated_ = false;
};

void run_produce(Slot& slot, ItemState& it, ItemPlacement& place, StagingPool& pool, PartQueue& parts) {
  SlotStagingInput input(slot, place, pool);
  const PartsScope scope(parts);
  try {
    it.item.produce(input);
    if (!input.allocated()) throw std::logic_error("produce() did not allocate its input");
    if (!it.item.out.empty() && it.item.out.size() != place.out_bytes)
      throw std::invalid_argument(fmt::format("produce() declared {} output bytes for a {}-byte output span",
                                              place.out_bytes, it.item.out.size()));
  } catch (...) {
    mark_failed(it, std::current_exception(), "host stage 'produce' failed");
  }
}

}  // namespace

std::size_t stage_inputs(Slot& slot, StagingPool& pool, PartQueue& parts) {
  std::size_t bytes = 0;
  slot.host_copies.clear();
  for (std::size_t k = 0; k < slot.items.size(); ++k) {
    ItemState& it = *slot.items[k];
    ItemPlacement& place = slot.layout[k];
    if (it.item.produce) {
      run_produce(slot, it, place, pool, parts);
    } else if (place.stage_in) {
      slot.host_copies.push_back({slot.in_stage.data + place.in_offset, place.in, place.in_bytes});
    }
    bytes += place.in_bytes;
  }
  // Plain stores into staging, not streaming ones: the pieces are small and the slots'
  // staging memory is reused over and over, so it stays in the last-level cache, where the
  // DMA engine reads it; streaming stores would push every byte out to DRAM first (measured:
  // docs/engine.md, the "Staging" part of "What happens to an item").
  copy_ranges(parts, slot.host_copies, CopyStore::cached);
  return bytes;
}

std::size_t stage_outputs(Slot& slot, PartQueue& parts) {
  std::size_t bytes = 0;
  slot.host_copies.clear();
  for (std::size_t k = 0; k < slot.items.size(); ++k) {
    ItemState& it = *slot.items[k];
    const ItemPlacement& place = slot.layout[k];
    if (it.failed || !place.stage_out) continue;
    const std::span<const std::byte> out(slot.out_stage.data() + place.out_offset, place.out_bytes);
    bytes += place.out_bytes;
    if (it.item.consume) {
      const PartsScope scope(parts);
      try {
        it.item.consume(out);
      } catch (...) {
        mark_failed(it, std::current_exception(), "host stage 'consume' failed");
      }
    } else {
      slot.host_copies.push_back({it.item.out.data(), out.data(), out.size()});
    }
  }
  copy_ranges(parts, slot.host_copies, CopyStore::streaming);
  return bytes;
}

}  // namespace streampipe::pipeline::detail
