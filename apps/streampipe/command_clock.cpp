// SPDX-License-Identifier: Apache-2.0
#include "command_clock.hpp"

#include "streampipe/host/process_age.hpp"

namespace streampipe::cli {
namespace {

CommandStart take() {
  CommandStart s;
  s.at = std::chrono::steady_clock::now();
  if (const auto age = host::process_age()) {
    s.before_ms = age->ms;
    s.resolution_ms = age->resolution_ms;
  }
  return s;
}

// Taken while the executable's static objects are made, before main; whichever of
// command_start() and this runs first takes it.
[[maybe_unused]] const CommandStart& taken_at_static_init = command_start();

}  // namespace

const CommandStart& command_start() {
  static const CommandStart start = take();
  return start;
}

double command_elapsed_ms(std::chrono::steady_clock::time_point at) {
  const CommandStart& s = command_start();
  return s.before_ms + std::chrono::duration<double, std::milli>(at - s.at).count();
}

}  // namespace streampipe::cli
