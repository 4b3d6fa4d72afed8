// SPDX-License-Identifier: Apache-2.0
#pragma once
// One Chrome/Perfetto trace from the traces of the ranks of an MPI job: rank 0 gathers each
// rank's pipeline::Timeline::chrome_trace() and writes one file with a process row per rank.
// Pure JSON work, no MPI.

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace streampipe::report {

// traces[r] is rank r's trace ({"traceEvents": [...]}, other keys allowed). Every event of
// rank r moves to process r + 1 (Perfetto treats pid 0 as the kernel's idle task) with its
// tid and everything else kept; each rank's process_name and process_sort_index metadata are
// replaced by one row named "rank r: <process_names[r]>" (the trace's own process name where
// process_names[r] is empty) and sorted in rank order. Top-level keys other than traceEvents
// are kept, the lowest rank's value winning.
// Each trace's times are its own process's clock, starting where that process started: rows
// are aligned at their start, not on a common clock, unless offsets_us is given: offsets_us[r]
// microseconds are then added to every ts of rank r (the caller measures them, e.g. from a
// barrier every rank leaves at about the same moment).
// Throws std::invalid_argument when process_names (or a non-empty offsets_us) does not have
// one entry per trace, an offset is not finite, or a trace is malformed (not an object, no
// traceEvents array, an event that is not an object, a ts that is not a number), naming the
// rank and the event.
[[nodiscard]] nlohmann::json merge_chrome_traces(const std::vector<nlohmann::json>& traces,
                                                 const std::vector<std::string>& process_names,
                                                 const std::vector<double>& offsets_us = {});

}  // namespace streampipe::report
