// SPDX-License-Identifier: Apache-2.0
#include "streampipe/report/trace_merge.hpp"

#include <fmt/format.h>

#include <cmath>
#include <stdexcept>

namespace streampipe::report {
namespace {

bool is_metadata(const nlohmann::json& event, const char* name) {
  const auto ph = event.find("ph");
  const auto event_name = event.find("name");
  return ph != event.end() && *ph == "M" && event_name != event.end() && *event_name == name;
}

// The process name a trace gave itself, or "" where it names none.
std::string own_process_name(const nlohmann::json& events) {
  for (const auto& event : events) {
    if (!is_metadata(event, "process_name")) continue;
    const auto args = event.find("args");
    if (args != event.end() && args->is_object()) {
      const auto name = args->find("name");
      if (name != args->end() && name->is_string()) return name->get<std::string>();
    }
  }
  return {};
}

const nlohmann::json& events_of(const nlohmann::json& trace, std::size_t rank) {
  if (!trace.is_object()) throw std::invalid_argument(fmt::format("merge_chrome_traces: rank {}'s trace is not a JSON object", rank));
  const auto events = trace.find("traceEvents");
  if (events == trace.end() || !events->is_array())
    throw std::invalid_argument(fmt::format("merge_chrome_traces: rank {}'s trace has no traceEvents array", rank));
  for (std::size_t i = 0; i < events->size(); ++i) {
    const auto& event = (*events)[i];
    if (!event.is_object())
      throw std::invalid_argument(fmt::format("merge_chrome_traces: rank {}'s event {} is not an object", rank, i));
    const auto ts = event.find("ts");
    if (ts != event.end() && !ts->is_number())
      throw std::invalid_argument(fmt::format("merge_chrome_traces: rank {}'s event {} has a ts that is not a number", rank, i));
  }
  return *events;
}

}  // namespace

nlohmann::json merge_chrome_traces(const std::vector<nlohmann::json>& traces, const std::vector<std::string>& process_names,
                                   const std::vector<double>& offsets_us) {
  if (process_names.size() != traces.size())
    throw std::invalid_argument(
        fmt::format("merge_chrome_traces: {} process names for {} traces", process_names.size(), traces.size()));
  if (!offsets_us.empty() && offsets_us.size() != traces.size())
    throw std::invalid_argument(fmt::format("merge_chrome_traces: {} offsets for {} traces", offsets_us.size(), traces.size()));
  for (std::size_t rank = 0; rank < offsets_us.size(); ++rank)
    if (!std::isfinite(offsets_us[rank]))
      throw std::invalid_argument(fmt::format("merge_chrome_traces: rank {}'s offset is not finite", rank));

  nlohmann::json merged = nlohmann::json::object();
  nlohmann::json out = nlohmann::json::array();
  for (std::size_t rank = 0; rank < traces.size(); ++rank) {
    const nlohmann::json& events = events_of(traces[rank], rank);
    const int pid = static_cast<int>(rank) + 1;
    std::string name = process_names[rank].empty() ? own_process_name(events) : process_names[rank];
    name = name.empty() ? fmt::format("rank {}", rank) : fmt::format("rank {}: {}", rank, name);
    out.push_back({{"name", "process_name"}, {"ph", "M"}, {"pid", pid}, {"args", {{"name", name}}}});
    out.push_back({{"name", "process_sort_index"}, {"ph", "M"}, {"pid", pid}, {"args", {{"sort_index", pid}}}});
    const double offset = offsets_us.empty() ? 0.0 : offsets_us[rank];
    for (const auto& event : events) {
      if (is_metadata(event, "process_name") || is_metadata(event, "process_sort_index")) continue;
      nlohmann::json moved = event;
      moved["pid"] = pid;
      if (offset != 0.0) {
        if (const auto ts = moved.find("ts"); ts != moved.end()) *ts = ts->get<double>() + offset;
      }
      out.push_back(std::move(moved));
    }
    for (const auto& [key, value] : traces[rank].items())
      if (key != "traceEvents" && !merged.contains(key)) merged[key] = value;
  }
  merged["traceEvents"] = std::move(out);
  return merged;
}

}  // namespace streampipe::report
