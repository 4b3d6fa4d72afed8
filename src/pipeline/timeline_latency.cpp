// SPDX-License-Identifier: Apache-2.0
#include "streampipe/pipeline/timeline_latency.hpp"

#include <algorithm>
#include <array>
#include <limits>
#include <optional>

namespace streampipe::pipeline {
namespace {

constexpr std::size_t kStages = 6;  // Stage::queue .. Stage::stage_out

std::size_t slot_of(Stage s) noexcept { return static_cast<std::size_t>(s); }

using ItemRecords = std::array<const StageRecord*, kStages>;

std::optional<double> device_interval(const StageRecord* r, bool is_copy) {
  if (r == nullptr) return std::nullopt;
  const double d = r->end_ms - r->start_ms;
  // A copy of real bytes never takes zero time: zero means it was not timed on its own.
  if (is_copy && d <= 0.0 && r->bytes > 0) return std::nullopt;
  return std::max(d, 0.0);
}

}  // namespace

TimelineQueries timeline_queries(std::span<const StageRecord> records, std::span<const ItemResult> results,
                                 bool device_times) {
  std::size_t max_index = 0;
  for (const auto& r : results) max_index = std::max(max_index, r.index);
  std::vector<ItemRecords> by_item(results.empty() ? 0 : max_index + 1);
  for (auto& slots : by_item) slots.fill(nullptr);
  for (const auto& rec : records) {
    const std::size_t s = slot_of(rec.stage);
    if (s >= kStages || rec.first_item >= by_item.size()) continue;
    const std::size_t last = std::min(by_item.size(), rec.first_item + std::max<std::size_t>(rec.items, 1));
    for (std::size_t i = rec.first_item; i < last; ++i) {
      const StageRecord*& slot = by_item[i][s];
      if (slot == nullptr || rec.end_ms >= slot->end_ms) slot = &rec;
    }
  }

  TimelineQueries out;
  std::vector<const ItemResult*> done;
  for (const auto& r : results)
    if (r.ok()) done.push_back(&r);
  std::sort(done.begin(), done.end(), [](const ItemResult* a, const ItemResult* b) { return a->index < b->index; });
  out.first_submit_ms = std::numeric_limits<double>::infinity();
  out.last_complete_ms = -std::numeric_limits<double>::infinity();
  for (const ItemResult* r : done) {
    const ItemRecords& rec = by_item[r->index];
    const auto at = [&](Stage s) { return rec[slot_of(s)]; };
    const StageRecord* delivered = at(Stage::stage_out) ? at(Stage::stage_out)
                                   : at(Stage::d2h)     ? at(Stage::d2h)
                                                        : at(Stage::compute);
    const StageRecord* queued = at(Stage::queue);
    if (delivered == nullptr && queued == nullptr) {
      ++out.unplaced;
      continue;
    }
    report::QueryRecord q;
    if (queued != nullptr) {
      q.submit_ms = queued->start_ms;
      q.complete_ms = q.submit_ms + r->timing.latency_ms;
    } else {
      q.complete_ms = delivered->end_ms;
      q.submit_ms = q.complete_ms - r->timing.latency_ms;
    }
    q.enqueue_begin_ms = at(Stage::stage_in) ? at(Stage::stage_in)->end_ms : q.submit_ms + r->timing.queued_ms;
    q.enqueue_end_ms = q.enqueue_begin_ms + r->timing.enqueue_ms;
    const StageRecord* batch_record = at(Stage::compute) ? at(Stage::compute) : at(Stage::h2d);
    q.batch = batch_record ? std::max<std::size_t>(batch_record->items, 1) : std::max<std::size_t>(r->batch_size, 1);
    q.items = 1;
    if (device_times) {
      q.h2d_ms = device_interval(at(Stage::h2d), true);
      q.compute_ms = device_interval(at(Stage::compute), false);
      q.d2h_ms = device_interval(at(Stage::d2h), true);
    }
    out.first_submit_ms = std::min(out.first_submit_ms, q.submit_ms);
    out.last_complete_ms = std::max(out.last_complete_ms, q.complete_ms);
    out.queries.push_back(q);
  }
  if (out.queries.empty()) out.first_submit_ms = out.last_complete_ms = 0;
  return out;
}

}  // namespace streampipe::pipeline
