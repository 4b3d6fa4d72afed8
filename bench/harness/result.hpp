// SPDX-License-Identifier: Apache-2.0
#pragma once
// What a benchmark found, apart from how it is shown: rows of samples (one per timed run)
// with their unit and verification, grouped in tables; the device, the limits the figures
// are held against, and the parameters. Two views of it:
//   format_table()  the text a terminal shows (the benchmark chose the columns and cells);
//   envelope()      the JSON every benchmark writes: benchmark, device, host, command,
//                   parameters, runs, warm-up, limits, and every row's summary and unit,
//                   stamped with streampipe's version and "schema": "streampipe.bench/1".

#include "streampipe/report/statistics.hpp"
#include "streampipe/report/table.hpp"

#include <nlohmann/json.hpp>

#include <functional>
#include <map>
#include <string>
#include <vector>

namespace streampipe::bench {

struct Row {
  std::string name;
  std::string unit;             // of `values`: "ms", "GB/s", "cell updates/s"...
  std::vector<double> values;   // one figure per timed run
  bool verified = true;         // every output of every run matched its reference
  bool peer = false;            // what a user would write without streampipe, measured alongside
  std::vector<std::string> cells;                    // its line in the table, in column order
  nlohmann::json fields = nlohmann::json::object();  // further JSON keys of this row
  [[nodiscard]] report::Summary summary() const { return report::summarize(values); }
};

struct Table {
  std::string name;   // short key ("gray", "kernels")
  std::string title;  // printed above the table
  std::vector<std::string> headers;
  std::vector<report::Align> align;  // per column; empty: report::Table's default
  std::vector<Row> rows;
  std::vector<std::string> notes;                    // lines printed under the table
  nlohmann::json fields = nlohmann::json::object();  // further JSON keys of this table
};

struct Result {
  std::string benchmark;
  int device_index = -1;                          // -1: no GPU was used
  std::string device_name = "none (host backend)";
  nlohmann::json parameters = nlohmann::json::object();  // the values it ran with
  int runs = 0, warmup = 0;
  nlohmann::json limits = nlohmann::json::object();      // what figures are held against
  nlohmann::json fields = nlohmann::json::object();      // further top-level JSON keys
  std::vector<Table> tables;
  // The declared outputs made (name -> content), for the runner to write: not in the envelope.
  std::map<std::string, std::string, std::less<>> outputs;
  // True when no row's output was wrong.
  [[nodiscard]] bool verified() const;
};

// The table as text: title, the rows' cells, then the notes.
[[nodiscard]] std::string format_table(const Table& table);
// The JSON of `result` with the host's description and `command` (how it was started).
[[nodiscard]] nlohmann::json envelope(const Result& result, const std::string& command);
// This process's command line, arguments separated by spaces (quoted where they hold one).
[[nodiscard]] std::string command_line();

}  // namespace streampipe::bench
