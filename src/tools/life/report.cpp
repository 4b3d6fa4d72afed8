// SPDX-License-Identifier: Apache-2.0
#include "streampipe/tools/life/report.hpp"

#include "streampipe/host/host_info.hpp"
#include "streampipe/report/json_schema.hpp"
#include "streampipe/report/table.hpp"

#include <fmt/format.h>

namespace streampipe::tools::life {
namespace {

double cell_updates(const Options& o, const Summary& s) {
  return static_cast<double>(o.width) * o.height * static_cast<double>(s.generations) *
         static_cast<double>(s.universes.size());
}

}  // namespace

std::string report_text(const Options& o, const Summary& s) {
  const bool several_ranks = o.job->several();
  // Which GPU ran each universe, when there is a choice.
  const bool show_device = s.set.gpus.size() > 1 || s.set.simulated || several_ranks;
  std::vector<std::string> columns{"universe"};
  if (show_device) columns.push_back(s.set.on_gpus() ? "GPU" : (several_ranks ? "rank" : "simulated device"));
  for (const char* c : {"start", "final", "min", "max"}) columns.emplace_back(c);
  report::Table table(columns, std::vector<report::Align>(columns.size(), report::Align::right));
  for (std::size_t i = 0; i < s.universes.size(); ++i) {
    const auto& p = s.universes[i].populations;
    std::vector<std::string> row{std::to_string(i)};
    if (show_device) row.push_back(std::to_string(s.universes[i].runs_on));
    for (const auto v : {p.first(), p.last(), p.min(), p.max()}) row.push_back(std::to_string(v));
    table.add_row(row);
  }
  return table.str(fmt::format("life {}x{}, {} generation(s), {} universe(s) on {}", o.width, o.height,
                               s.generations, s.universes.size(), s.where)) +
         fmt::format("{:.1f} ms stepping ({:.3g} cell updates/s), {:.1f} ms writing output\n", s.stepping_ms,
                     cell_updates(o, s) / (s.stepping_ms / 1e3), s.output_ms);
}

nlohmann::json report_json(const Options& o, const Summary& s) {
  nlohmann::json j = {{"tool", "life"},
                      {"width", o.width},
                      {"height", o.height},
                      {"generations", o.generations},
                      {"universes", s.universes.size()},
                      {"backend", s.set.on_gpus() ? "gpu" : "host"},
                      {"kernel", s.set.on_gpus() ? std::string(to_string(o.kernel)) : "host"},
                      {"layout", !s.set.on_gpus() ? "host" : s.layout == Layout::batched ? "batched" : "stream_each"},
                      {"device", s.device},
                      {"devices", nlohmann::json::array()},
                      {"universe_devices", nlohmann::json::array()},
                      {"host", host::describe_host()},
                      {"stepping_ms", s.stepping_ms},
                      {"output_ms", s.output_ms},
                      {"cell_updates_per_s", cell_updates(o, s) / (s.stepping_ms / 1e3)},
                      {"final_populations", nlohmann::json::array()}};
  for (const auto& u : s.universes) j["final_populations"].push_back(u.populations.last());
  for (const auto& [index, name] : s.gpus) j["devices"].push_back({{"index", index}, {"name", name}});
  if (s.set.simulated)
    for (const int d : s.set.gpus) j["devices"].push_back({{"index", d}, {"name", "simulated"}});
  if (!s.set.gpus.empty())
    for (const auto& u : s.universes) j["universe_devices"].push_back(u.runs_on);
  return report::stamped(std::move(j), "life");
}

report::LatencyRun latency_run(const Options& o, const Summary& s) {
  report::LatencyRun run;
  run.name = fmt::format("life {}x{}, {} universe(s) on {}; query = one generation of one universe", o.width,
                         o.height, s.universes.size(), s.where);
  run.device = s.set.on_gpus() ? s.device : std::string("host");
  // The GPU path waits in cudaStreamSynchronize (spins under the default scheduling); the
  // host backend computes in the calling thread and never waits.
  run.sync = s.set.on_gpus() ? report::SyncMode::spin : report::SyncMode::blocking;
  run.limits.iteration_limit = static_cast<std::size_t>(o.generations) * s.universes.size();
  run.wall_ms = s.stepping_ms;
  run.queries = s.queries;
  return run;
}

}  // namespace streampipe::tools::life
