// SPDX-License-Identifier: Apache-2.0
#pragma once
// Which part of the machine bound a gray run: each stage's busy time against what it could
// have done in the conversion's wall time (RunSummary::wall_ms, first submit to last file):
//   host workers  read + decode and encode + write, summed over the files, over
//                 workers x wall (the engine's host threads run both);
//   device        GPU backend: per GPU, the union of its H2D, kernel and D2H intervals over
//                 wall - the share of the run some lane kept that GPU doing anything;
//   host lanes    host backend: copies and luma summed, over lanes x wall.
// The stage with the largest share bound the run. A share near 100% says the stage ran at
// its own measured maximum; low shares everywhere say the run waited on something else (the
// submitting thread, the disk). Start-up before the first file is outside all of them.

#include "streampipe/tools/gray/convert.hpp"

#include <cstddef>
#include <string>
#include <vector>

namespace streampipe::tools::gray {

struct StageLoad {
  std::string stage;    // "host workers", "device" or "host lanes"
  double share = 0;     // busy / (capacity x wall), 0..1 (rounding may pass 1 a little)
  int capacity = 0;     // worker threads, GPUs or host lanes
  double busy_ms = 0;   // summed (workers, host lanes) or the GPUs' unions added
};

struct RunBound {
  std::vector<StageLoad> stages;  // workers first, then the device or the host lanes
  std::size_t bound = 0;          // index of the largest share
  double decode_share = 0;        // the workers' share split: read + decode ...
  double encode_share = 0;        // ... and encode + write
  [[nodiscard]] const StageLoad& bound_stage() const { return stages.at(bound); }
};

// From the summary's timeline records, wall time, workers and lanes. Empty stages for a run
// without records.
[[nodiscard]] RunBound run_bound(const RunSummary& summary);

}  // namespace streampipe::tools::gray
