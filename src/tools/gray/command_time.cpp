// SPDX-License-Identifier: Apache-2.0
// A gray command's own wall clock and its start-up (see tools/gray/command_time.hpp).

#include "streampipe/tools/gray/command_time.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace streampipe::tools::gray {

namespace {

// Engine set-up, as measured or as what convert() spent outside the conversion.
double engine_ms(const RunSummary& s, const CommandTime& t) {
  return t.setup_ms >= 0 ? t.setup_ms : std::max(0.0, t.convert_ms - s.wall_ms);
}

}  // namespace

double CommandTime::startup_ms(const RunSummary& s) const noexcept {
  return before_main_ms + options_ms + devices_ms + plan_ms + engine_ms(s, *this);
}

double CommandTime::after_ms(const RunSummary& s) const noexcept {
  return setup_ms >= 0 ? std::max(0.0, convert_ms - setup_ms - s.wall_ms) : 0.0;
}

std::string command_line(const RunSummary& s, const CommandTime& t) {
  const double wall = t.command_wall_ms();
  const std::string before =
      t.resolution_ms > 0 ? fmt::format("before main {:.2f} s, ", t.before_main_ms / 1e3) : "before main unknown, ";
  const char* engine_part = t.setup_ms < 0 ? "engine set-up and tear-down" : "the engine's CPU lanes and workers";
  std::string line = fmt::format(
      "{} images in {:.2f} s = {:.1f} images/s (command wall clock; start-up {:.2f} s: {}options {:.2f} s, finding the "
      "GPUs {:.2f} s, inputs and outputs checked {:.2f} s, {} {:.2f} s",
      s.ok, wall / 1e3, wall > 0 ? static_cast<double>(s.ok) * 1e3 / wall : 0.0, t.startup_ms(s) / 1e3, before,
      t.options_ms / 1e3, t.devices_ms / 1e3, t.plan_ms / 1e3, engine_part, engine_ms(s, t) / 1e3);
  if (t.setup_ms >= 0) line += fmt::format("; after the last file {:.2f} s", t.after_ms(s) / 1e3);
  line += ")";
  return line;
}

nlohmann::json command_json(const RunSummary& s, const CommandTime& t) {
  const double wall = t.command_wall_ms();
  nlohmann::json parts = {{"before_main_ms", t.before_main_ms},
                          {"before_main_resolution_ms", t.resolution_ms},
                          {"options_ms", t.options_ms},
                          {"devices_ms", t.devices_ms},
                          {"plan_ms", t.plan_ms},
                          {"convert_ms", t.convert_ms},
                          {"conversion_ms", s.wall_ms},
                          {"after_ms", t.after_ms(s)}};
  parts["setup_ms"] = t.setup_ms >= 0 ? nlohmann::json(t.setup_ms) : nlohmann::json(nullptr);
  return {{"command_wall_ms", wall},
          {"command_images_per_s", wall > 0 ? static_cast<double>(s.ok) * 1e3 / wall : 0.0},
          {"startup_ms", t.startup_ms(s)},
          {"command_time", std::move(parts)}};
}

}  // namespace streampipe::tools::gray
