// SPDX-License-Identifier: Apache-2.0
#include "streampipe/host/process_age.hpp"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <unistd.h>

namespace streampipe::host {

std::optional<ProcessAge> process_age() noexcept {
  timespec now{};
  if (::clock_gettime(CLOCK_BOOTTIME, &now) != 0) return std::nullopt;
  std::FILE* f = std::fopen("/proc/self/stat", "r");
  if (f == nullptr) return std::nullopt;
  char line[1024] = {};
  const std::size_t n = std::fread(line, 1, sizeof line - 1, f);
  std::fclose(f);
  line[n] = '\0';
  // Field 2 is the command name in parentheses, which may itself hold spaces and ')': the
  // fields after it are counted from the last ')'. Field 3 (state) follows it; 22 is starttime.
  const char* p = std::strrchr(line, ')');
  if (p == nullptr) return std::nullopt;
  unsigned long long start_ticks = 0;
  // Fields 3 (state) to 21 are skipped as words.
  if (std::sscanf(p + 1, "%*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %llu",
                  &start_ticks) != 1)
    return std::nullopt;
  const long ticks_per_s = ::sysconf(_SC_CLK_TCK);
  if (ticks_per_s <= 0) return std::nullopt;
  const double tick_ms = 1e3 / static_cast<double>(ticks_per_s);
  const double now_ms = static_cast<double>(now.tv_sec) * 1e3 + static_cast<double>(now.tv_nsec) / 1e6;
  // The kernel truncates the start to whole ticks: the true start lies in [tick, tick + 1).
  const double start_ms = (static_cast<double>(start_ticks) + 0.5) * tick_ms;
  return ProcessAge{std::max(0.0, now_ms - start_ms), tick_ms};
}

}  // namespace streampipe::host
