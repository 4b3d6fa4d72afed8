// SPDX-License-Identifier: Apache-2.0
#pragma once
// gray under mpirun: every rank converted its shard of the files; rank 0 alone prints one
// summary of the job (with a line per rank), writes one merged --json and one --trace with a
// process row per rank. Collective: every rank calls it once, after its own run.

#include "outputs.hpp"
#include "ranks.hpp"

#include "streampipe/tools/gray/convert.hpp"

#include <nlohmann/json.hpp>

#include <string>

namespace streampipe::cli {

struct GrayRankOutputs {
  std::string json_path;   // --json: the merged report
  std::string trace_path;  // --trace: the merged trace
  bool quiet = false;
  nlohmann::json common;   // keys every report carries (tool, format, output_dir, host)
};

// Gathers each rank's run to rank 0, which prints and writes; returns the job's exit status
// on every rank (1 when any rank had a failed file).
int finish_gray_ranks(const Ranks& ranks, const tools::gray::RunSummary& mine, int my_status,
                      const GrayRankOutputs& wanted, Outputs& out);

}  // namespace streampipe::cli
