// SPDX-License-Identifier: Apache-2.0
#include "harness/result.hpp"

#include "streampipe/host/host_info.hpp"
#include "streampipe/report/json_schema.hpp"


#include <fstream>
#include <iterator>

namespace streampipe::bench {

bool Result::verified() const {
  for (const auto& t : tables)
    for (const auto& r : t.rows)
      if (!r.verified) return false;
  return true;
}

std::string format_table(const Table& table) {
  report::Table text(table.headers, table.align);
  for (const auto& r : table.rows) text.add_row(r.cells);
  std::string out = text.str(table.title);
  for (const auto& note : table.notes) out += note + "\n";
  return out;
}

nlohmann::json envelope(const Result& result, const std::string& command) {
  nlohmann::json tables = nlohmann::json::array();
  for (const auto& t : result.tables) {
    nlohmann::json rows = nlohmann::json::array();
    for (const auto& r : t.rows) {
      // "runs": the timed runs this row really had (the envelope's "runs" is what was asked).
      nlohmann::json j = {{"name", r.name},
                          {"unit", r.unit},
                          {"runs", r.values.size()},
                          {"summary", r.summary()},
                          {"verified", r.verified}};
      if (r.peer) j["peer"] = true;
      j.update(r.fields);
      rows.push_back(std::move(j));
    }
    nlohmann::json j = {{"name", t.name}, {"title", t.title}};
    j.update(t.fields);
    j["rows"] = std::move(rows);
    tables.push_back(std::move(j));
  }
  nlohmann::json out = {{"benchmark", result.benchmark},
                        {"device", {{"index", result.device_index}, {"name", result.device_name}}},
                        {"host", host::describe_host()},
                        {"command", command},
                        {"parameters", result.parameters},
                        {"runs", result.runs},
                        {"warmup", result.warmup},
                        {"limits", result.limits}};
  out.update(result.fields);
  out["tables"] = std::move(tables);
  out["verified"] = result.verified();
  return report::stamped(std::move(out), "bench");
}

std::string command_line() {
  // Linux: the arguments as the kernel holds them, each ended by a NUL.
  std::ifstream in("/proc/self/cmdline", std::ios::binary);
  const std::string raw((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::string out, arg;
  const auto flush = [&] {
    if (!out.empty()) out += ' ';
    if (!arg.empty() && arg.find_first_of(" \t'\"\\$") == std::string::npos) {
      out += arg;
    } else {  // single quotes, each ' inside written as '\''
      out += '\'';
      for (const char c : arg) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
      out += '\'';
    }
    arg.clear();
  };
  for (const char c : raw) {
    if (c == '\0')
      flush();
    else
      arg += c;
  }
  if (!arg.empty()) flush();
  return out;
}

}  // namespace streampipe::bench
