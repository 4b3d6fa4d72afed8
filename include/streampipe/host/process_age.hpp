// SPDX-License-Identifier: Apache-2.0
#pragma once
// How long this process has existed, as a user's clock around the command would see it:
// the kernel's start time of the process (/proc/self/stat, field 22, counted in clock ticks
// since boot) against CLOCK_BOOTTIME now. It covers what no clock inside the program can:
// exec, loading the shared libraries, static initialization. The start time is known to one
// clock tick (10 ms on most systems); the age returned is centred on that interval.

#include <optional>

namespace streampipe::host {

struct ProcessAge {
  double ms = 0;             // now minus the process's start, >= 0
  double resolution_ms = 0;  // the start is known to +- half of this
};

// nullopt where /proc/self/stat or the boot-time clock cannot be read (not Linux). Never throws.
[[nodiscard]] std::optional<ProcessAge> process_age() noexcept;

}  // namespace streampipe::host
