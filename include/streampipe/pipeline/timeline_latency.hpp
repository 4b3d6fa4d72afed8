// SPDX-License-Identifier: Apache-2.0
#pragma once
// The pipeline engine's run as trtexec-style queries (report/latency_report.hpp): one
// QueryRecord per item that finished, from the engine's timeline and its ItemResults.
//
// Every timestamp is on the timeline's clock. The timeline holds no submit or delivery
// stamp, so they are placed from the item's own record: delivery is the end of its last
// host-side stage (stage_out, else D2H, else compute), submit is delivery minus the
// engine's measured latency (a Stage::queue record, when present, gives submit directly).
// Enqueue begins at the end of stage_in (the item was staged or decoded), else at submit +
// queued_ms, and lasts ItemTiming::enqueue_ms. Latency and enqueue time are therefore the
// engine's own figures; only their placement on the clock is derived.
//
// H2D, compute and D2H come from the item's h2d/compute/d2h records (a record covering
// several items is a batch: each of them gets the batch's intervals and batch = items in
// the record). A missing stage stays empty; so does a zero-length copy that moved bytes
// (graph replay times copies and kernel as one span, reported as compute). On the host
// backend these stages are memcpy and host threads, not GPU events: with
// device_times = false they stay empty. Failed and cancelled items are no queries.

#include "streampipe/pipeline/item.hpp"
#include "streampipe/pipeline/timeline.hpp"
#include "streampipe/report/latency_report.hpp"

#include <cstddef>
#include <span>
#include <vector>

namespace streampipe::pipeline {

struct TimelineQueries {
  std::vector<report::QueryRecord> queries;  // in item index order
  std::size_t unplaced = 0;  // finished items without any timeline record (not in queries)
  double first_submit_ms = 0;  // earliest submit and latest completion of the queries
  double last_complete_ms = 0;
};

[[nodiscard]] TimelineQueries timeline_queries(std::span<const StageRecord> records,
                                               std::span<const ItemResult> results, bool device_times);

}  // namespace streampipe::pipeline
