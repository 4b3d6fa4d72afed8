// SPDX-License-Identifier: Apache-2.0
#pragma once
// A slot's host work, run on a worker thread around its device phase: before it, produce
// stages and the copies of pageable input into the slot's staging; after it, consume stages
// and the copies of staged output to the callers' memory. Copies, and the parts a host stage
// runs with run_parts(), go through the engine's PartQueue, spread over the workers. A
// failing host stage fails its own item only (mark_failed).

#include "slot.hpp"
#include "staging_pool.hpp"

#include "streampipe/pipeline/host_copy.hpp"

#include <cstddef>

namespace streampipe::pipeline::detail {

// Runs the slot's produce stages (a produce item is alone in its slot and takes its staging
// block from `pool` when it allocates) and copies the other staged inputs into
// slot.in_stage at their offsets. Returns the input bytes of the slot's items.
std::size_t stage_inputs(Slot& slot, StagingPool& pool, PartQueue& parts);

// Hands each staged output to its consume stage or copies it to the item's output span.
// Returns the bytes staged out.
std::size_t stage_outputs(Slot& slot, PartQueue& parts);

}  // namespace streampipe::pipeline::detail
