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
#include "streampipe/pipeline/operation.hpp"
#include "streampipe/pipeline/timeline.hpp"

#include <cstddef>
#include <exception>
#include <optional>
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
  std::size_t out_bytes = 0;  // known at submission (validate_item); a produce item's comes later
  bool failed = false;  // its result is final: later stages pass it by
  bool gpu_only = false;  // its memory is on a GPU: never the CPU's lanes
};

struct Member;

struct Slot {
  int id = 0;                   // among its member's slots
  int lane = 0;                 // engine-wide lane index
  int member_lane = 0;          // among its member's lanes
  std::size_t member = 0;       // its member's position in the engine's set
  Member* owner = nullptr;      // that member
  int device = 0;               // its device: a GPU (or simulated GPU), or kCpuDevice
  bool host_form = false;       // the operation's host form runs its batches (CPU, simulated GPU)
  double acquired_ms = 0;       // when its current batch took it
  double taken_work = 1;        // the work its current batch was taken for (DeviceChoice)
  std::size_t taken_kind = 0;   // and its kind (the first item's Item::work_kind)
  std::size_t max_items = 1;
  StagingPool::Lease in_stage;  // lent from the engine's staging pool while needed
  StagingBuffer out_stage;
  std::vector<std::unique_ptr<ItemState>> items;
  std::vector<ItemPlacement> layout;  // layout[k]: where items[k] lies; set by dispatch
  bool stages_out = false;            // some item comes back through out_stage; set by enqueue
  std::vector<CopyRange> host_copies; // stage in or stage out: never both at once
  SlotWork work;
  double stage_in_ms = 0, stage_out_ms = 0;

  // Room for `max_items` from the start, kept from batch to batch: adding an item to a slot
  // does not allocate, so an item that submit() counted reaches a slot that will deliver it.
  Slot(int id_, int lane_, int member_lane_, Member& owner_, std::size_t member_, int device_, bool host_form_,
       std::size_t max_items_, int numa_node = -1, std::optional<HostResourceRef> staging_memory = {})
      : id(id_), lane(lane_), member_lane(member_lane_), member(member_), owner(&owner_), device(device_),
        host_form(host_form_),
        max_items(max_items_),
        out_stage(!host_form_, numa_node, staging_memory, host_form_ ? -1 : device_) {
    items.reserve(max_items);
    layout.reserve(max_items);
  }
};

// An item just submitted, its result already naming it.
[[nodiscard]] std::unique_ptr<ItemState> start_item(Item item, std::size_t index, double now_ms);
// Fails the item: `what` failed with `e`. The error names the item, then `what`, then e's message.
void mark_failed(ItemState& it, std::exception_ptr e, const std::string& what);
// Ends an item that did not run: its error names it, then `why`.
void mark_not_run(ItemState& it, ItemStatus status, const std::string& why);
// Whether the lane's copies read or write the caller's memory at `p` in place: anything on
// a member running the host form (its "device" is the host); on a GPU what a copy engine
// takes at full speed as it is (pinned host, device or managed memory:
// is_copy_engine_direct), so only pageable memory is staged.
[[nodiscard]] bool host_memory_is_direct(bool host_form, const void* p);
// Readies slot.work for the slot's items that have not failed: their output sizes and
// where each output goes, the layout, the output staging and the copies. Returns false
// when no item is left to run. Throws std::bad_alloc, and CudaError when no pinned memory
// is left for the output staging; the slot's items are then as they were.
[[nodiscard]] bool prepare_work(Slot& slot, const Operation& op);
// Whether `e` is a sticky CudaError: its device can run nothing more.
[[nodiscard]] bool is_sticky_error(const std::exception_ptr& e) noexcept;
// Fails every item of the slot not failed yet: `what` failed with `e` (mark_failed).
void fail_remaining(Slot& slot, std::exception_ptr e, const std::string& what);
// The slot's device phase on the timeline (copies in, operation, copies out), as its lane
// timed it.
void record_device_stages(Timeline& timeline, const Slot& slot);
// The item's result as the slot ran it: lane, batch size, the stage times of the slot and
// its latency up to `now_ms`.
void record_slot_result(ItemState& it, const Slot& slot, std::size_t batch_size, double now_ms);

}  // namespace streampipe::pipeline::detail
