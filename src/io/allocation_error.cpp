// SPDX-License-Identifier: Apache-2.0
#include "streampipe/io/allocation_error.hpp"

#include <fmt/format.h>

namespace streampipe::io {

std::string format_bytes(std::uint64_t bytes) {
  static constexpr const char* units[] = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  if (bytes < 1024) return fmt::format("{} bytes", bytes);
  double value = static_cast<double>(bytes) / 1024.0;
  int unit = 0;
  while (value >= 1024.0 && unit < 5) {
    value /= 1024.0;
    ++unit;
  }
  return fmt::format("{:.1f} {}", value, units[unit]);
}

AllocationError::AllocationError(std::uint64_t bytes, const std::string& purpose)
    : message_(fmt::format("cannot allocate {} ({} bytes) for {}", format_bytes(bytes), bytes, purpose)),
      bytes_(bytes) {}

}  // namespace streampipe::io
