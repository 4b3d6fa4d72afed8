// SPDX-License-Identifier: Apache-2.0
#pragma once
// gray under mpirun: every rank converted its shard of the files (Job::shard over the plan's
// jobs); gather_job brings each rank's run to rank 0 (mpi::gather_parts), which gets the
// job's one summary (a line per rank), one report and one trace with a process row per rank.
// Collective: every rank calls it once, after its own run.

#include "streampipe/mpi/job.hpp"
#include "streampipe/tools/gray/convert.hpp"

#include <nlohmann/json.hpp>

#include <string>

namespace streampipe::tools::gray {

struct JobReport {
  int status = 0;        // the job's exit status, on every rank (1 when any rank's was)
  bool leader = false;   // rank 0: the fields below describe the job
  std::string text;      // the summary, a line per rank; each line ends with a newline
  nlohmann::json json;   // `common`, the totals and every rank's run, stamped "gray.ranks"
  nlohmann::json trace;  // with a trace asked for: one Perfetto trace, a process row per rank
};

// `common`: keys every report carries (tool, format, output_dir, host, unreadable). Throws
// std::runtime_error on a malformed part.
[[nodiscard]] JobReport gather_job(const mpi::Job& job, const RunSummary& mine, int my_status, bool with_trace,
                                   const nlohmann::json& common);

}  // namespace streampipe::tools::gray
