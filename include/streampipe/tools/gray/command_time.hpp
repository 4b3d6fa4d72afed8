// SPDX-License-Identifier: Apache-2.0
#pragma once
// A `streampipe gray` command as a user times it: from the process's start to the last
// file written, split into what came before the first file was submitted (start-up), the
// conversion (RunSummary::wall_ms) and what convert() did after the last file. The CLI
// takes the time points; this adds them up, prints the summary line and writes the JSON.
// Writing --json / --trace and the process's exit come after and are not in it (bench gray
// measures the whole command from outside).

#include "streampipe/tools/gray/convert.hpp"

#include <nlohmann/json.hpp>

#include <string>

namespace streampipe::tools::gray {

struct CommandTime {
  double before_main_ms = 0;  // exec, shared libraries, static initializers (host::process_age)
  double resolution_ms = 0;   // the process start is known to one clock tick; 0: unknown
  double options_ms = 0;      // static initialization -> the command runs (parsing the options)
  double devices_ms = 0;      // checking the GPUs named (--devices; with "all" the engine finds them meanwhile)
  double plan_ms = 0;         // scanning the inputs, naming and checking every output
  double convert_ms = 0;      // convert, whole
  // Inside convert(), before the first file was submitted: the engine's CPU lanes and
  // workers (the GPUs start meanwhile; RunSummary::setup_ms where the library measures it);
  // < 0: not measured, and then
  // convert_ms - wall_ms is set-up and tear-down together.
  double setup_ms = -1;

  [[nodiscard]] double command_wall_ms() const noexcept {
    return before_main_ms + options_ms + devices_ms + plan_ms + convert_ms;
  }
  // Process start -> first file taken (with unmeasured set-up: -> conversion start,
  // counting convert()'s tear-down as set-up).
  [[nodiscard]] double startup_ms(const RunSummary& s) const noexcept;
  // convert() after the last file (engine tear-down); 0 when set-up was not measured.
  [[nodiscard]] double after_ms(const RunSummary& s) const noexcept;
};

// "300 images in 0.41 s = 732 images/s (command wall clock; start-up 0.18 s: ...)".
[[nodiscard]] std::string command_line(const RunSummary& s, const CommandTime& t);
// command_wall_ms, command_images_per_s, startup_ms and command_time (every part).
[[nodiscard]] nlohmann::json command_json(const RunSummary& s, const CommandTime& t);

}  // namespace streampipe::tools::gray
