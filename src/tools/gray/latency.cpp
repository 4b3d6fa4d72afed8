// SPDX-License-Identifier: Apache-2.0
#include "streampipe/tools/gray/latency.hpp"

#include "streampipe/pipeline/timeline_latency.hpp"

#include <fmt/format.h>

namespace streampipe::tools::gray {

report::LatencyRun latency_run(const RunSummary& s) {
  const bool gpu = s.backend == "gpu";
  const pipeline::TimelineQueries t = pipeline::timeline_queries(s.records, s.items, gpu);
  report::LatencyRun run;
  run.name = fmt::format("gray: {} of {} image(s) converted; query = one image (decode, convert, encode)",
                         t.queries.size(), s.files.size());
  run.device = gpu ? s.device : std::string("host");
  // The GPU lanes wait on events created without cudaEventBlockingSync; the host backend's
  // lanes wait on condition variables.
  run.sync = gpu ? report::SyncMode::spin : report::SyncMode::blocking;
  run.limits.iteration_limit = s.files.size();
  run.wall_ms = s.wall_ms;
  run.queries = t.queries;
  // Times from the first submit, not from the engine clock's arbitrary origin.
  for (auto& q : run.queries) {
    q.submit_ms -= t.first_submit_ms;
    q.enqueue_begin_ms -= t.first_submit_ms;
    q.enqueue_end_ms -= t.first_submit_ms;
    q.complete_ms -= t.first_submit_ms;
  }
  return run;
}

}  // namespace streampipe::tools::gray
