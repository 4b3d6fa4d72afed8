// SPDX-License-Identifier: Apache-2.0
#pragma once
// When this command began, as early as the process can know it: a steady_clock point taken
// during static initialization, and the process's age at that moment (host::process_age:
// exec, loading the shared libraries and the static initializers before it). With both, a
// command reports the wall clock a user's `time` shows, less the exit.

#include <chrono>

namespace streampipe::cli {

struct CommandStart {
  std::chrono::steady_clock::time_point at;  // taken during static initialization
  double before_ms = 0;                      // process start -> `at`; 0 where unknown
  double resolution_ms = 0;                  // before_ms is known to +- half of this; 0: unknown
};

[[nodiscard]] const CommandStart& command_start();

// Milliseconds from `at` (a point after command_start().at) back to the process's start.
[[nodiscard]] double command_elapsed_ms(std::chrono::steady_clock::time_point at);

}  // namespace streampipe::cli
