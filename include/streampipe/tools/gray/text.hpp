// SPDX-License-Identifier: Apache-2.0
#pragma once
// What `streampipe gray` prints about a finished run. By default one line, as convert,
// mogrify and ffmpeg keep quiet: the counts, the command's wall clock and where it ran. The
// profiler's report (start-up split, conversion rate, bound stage, every device, the time
// table) only when asked (-v).

#include "streampipe/tools/gray/command_time.hpp"

#include "streampipe/tools/gray/convert.hpp"

#include <cstddef>
#include <string>

namespace streampipe::tools::gray {

struct RunText {
  std::size_t files = 0;       // the files the run was given
  std::size_t unreadable = 0;  // folders or files the plan could not read (named on stderr)
  bool gpu_wanted = false;     // the run could have used a GPU (not --backend host, not simulated)
};

// "gray: 32 file(s): 32 ok, 0 failed in 1.23 s, 26.0 images/s on the CPU (no NVIDIA driver
// found)", and a clause for failures and what could not be read. Ends with a newline.
[[nodiscard]] std::string summary_line(const RunSummary& s, const CommandTime& t,
                                            const RunText& run);
// The summary line, then the whole report, each line ending with a newline.
[[nodiscard]] std::string full_report(const RunSummary& s, const CommandTime& t,
                                           const RunText& run);

}  // namespace streampipe::tools::gray
