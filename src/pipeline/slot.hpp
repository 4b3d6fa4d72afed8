// SPDX-License-Identifier: Apache-2.0
#pragma once
// The engine's bookkeeping: an item from submit() to delivery, a slot (the unit of work in
// flight: one batch, its items, their layout, its staging and the lane's work record), and
// what is written down about them (results, errors, the timeline). A slot is reused for
// batch after batch, so its vectors keep their capacity.

#include "lane_executor.hpp"
#include "slot_layout.hpp"
#include "staging_buffer.hpp"
#include "staging_pool.hpp"

#include "streampipe/pipeline/host_copy.hpp"
#include "streampipe/pipeline/item.hpp"
#include "streampipe/pipeline/timeline.hpp"

#include <cstddef>
#include <exception>
#include <future>
#include <memory>
#include <string>
#include <vector>

namespace streampipe::pipeline::detail {

struct ItemState {
  std::size_t index = 0;
  Item item;
  std::promise<ItemResult> promise;
  ItemResult result;
  double submitted_ms = 0, assigned_ms = 0;
  bool failed = false;  // its result is final: later stages pass it by
};

struct Slot {
  int id = 0;
  int lane = 0;
  StagingPool::Lease in_stage;  // lent from the engine's staging pool while needed
  StagingBuffer out_stage;
  std::vector<std::unique_ptr<ItemState>> items;
  std::vector<ItemPlacement> layout;  // layout[k]: where items[k] lies; set by dispatch
  bool stages_out = false;            // some item comes back through out_stage; set by enqueue
  std::vector<CopyRange> host_copies; // stage in or stage out: never both at once
  SlotWork work;
  double stage_in_ms = 0, stage_out_ms = 0;

  Slot(int id_, int lane_, bool pinned) : id(id_), lane(lane_), out_stage(pinned) {}
};

// An item just submitted, its result already naming it.
[[nodiscard]] std::unique_ptr<ItemState> start_item(Item item, std::size_t index, double now_ms);
// Fails the item: `what` failed with `e`. The error names the item, then `what`, then e's message.
void mark_failed(ItemState& it, std::exception_ptr e, const std::string& what);
// Ends an item that did not run: its error names it, then `why`.
void mark_not_run(ItemState& it, ItemStatus status, const std::string& why);
// The slot's device phase on the timeline (copies in, operation, copies out), as its lane
// timed it.
void record_device_stages(Timeline& timeline, const Slot& slot);
// The item's result as the slot ran it: lane, batch size, the stage times of the slot and
// its latency up to `now_ms`.
void record_slot_result(ItemState& it, const Slot& slot, std::size_t batch_size, double now_ms);

}  // namespace streampipe::pipeline::detail
