// SPDX-License-Identifier: Apache-2.0
#pragma once
// Private to src/tools/mandelbrot: a part of the image (its bands, each an engine item) as
// one query and one compute time, from the engine's timeline records and item results
// alone, so that nothing is timed twice. Pure.

#include "streampipe/pipeline/item.hpp"
#include "streampipe/pipeline/timeline.hpp"
#include "streampipe/report/latency_report.hpp"

#include <span>

namespace streampipe::tools::mandelbrot {

struct PartTiming {
  double compute_ms = 0;  // every device: the first compute record's start to the last one's end
  // From the first band's submission (0): enqueue from the first band's to the last band's,
  // complete at the last delivery. With gpu_stages, the stages of the GPUs' records (device
  // >= 0): H2D and D2H their busy time (overlapping copies counted once), compute the first
  // kernel's start to the last one's end; left empty where the GPUs have no such record.
  report::QueryRecord query;
};

[[nodiscard]] PartTiming part_timing(std::span<const pipeline::StageRecord> records,
                                     std::span<const pipeline::ItemResult> results, bool gpu_stages);

}  // namespace streampipe::tools::mandelbrot
