// SPDX-License-Identifier: Apache-2.0
#pragma once
// The printed table of one output format of `bench gray`: per command, the wall clock of
// the whole command (median, min, max), images/s, the speed-up against the Pillow peer and
// against the tool's own host backend, the tool's start-up and the time outside its
// conversion window, the stage that bound it; and the notes that say what was compared.

#include "harness/result.hpp"

#include "streampipe/io/image.hpp"

#include <string>
#include <vector>

namespace streampipe::bench::gray_bench {

// The indices of the rows the speed-ups are taken against; -1 where there is none.
struct Yardsticks {
  int tool = -1;   // the tool with its defaults
  int host = -1;   // --backend host
  int peer = -1;   // Pillow
};

// Fills each row's cells and speed-up fields; the notes say what lies behind the columns.
[[nodiscard]] Table gray_table(std::vector<Row> rows, const Yardsticks& at, io::ImageFormat format, std::string title);

// The figures issue 23 asks of the tool's defaults on an H100 host with 16 cores, against
// the table's rows: a note and the JSON (targets, each with what was measured here).
void add_targets(Table& table, const Yardsticks& at, io::ImageFormat format);

}  // namespace streampipe::bench::gray_bench
