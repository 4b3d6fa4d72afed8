// SPDX-License-Identifier: Apache-2.0
#include "life_ranks.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include <algorithm>

namespace streampipe::cli {

std::optional<JobLife> gather_life(const Ranks& ranks, const std::vector<UniverseOutcome>& mine, double stepping_ms,
                                   double output_ms, const std::string& where) {
  nlohmann::json part = {{"stepping_ms", stepping_ms},
                         {"output_ms", output_ms},
                         {"where", fmt::format("rank {} on {} {}", ranks.info().rank, ranks.host(), where)},
                         {"universes", nlohmann::json::array()}};
  for (const auto& u : mine) {
    const auto& p = u.populations;
    part["universes"].push_back({{"runs_on", u.runs_on}, {"count", p.count()}, {"first", p.first()},
                                 {"last", p.last()}, {"min", p.min()}, {"max", p.max()}, {"all", p.all()},
                                 {"keeps_all", p.keeps_all()}});
  }
  const std::vector<std::string> parts = ranks.gather(part.dump());
  if (!ranks.leader()) return std::nullopt;
  JobLife job;
  std::vector<std::string> places;
  for (const auto& text : parts) {
    const auto j = nlohmann::json::parse(text);
    job.stepping_ms = std::max(job.stepping_ms, j.at("stepping_ms").get<double>());  // the ranks step at once
    job.output_ms = std::max(job.output_ms, j.at("output_ms").get<double>());
    places.push_back(j.at("where").get<std::string>());
    for (const auto& u : j.at("universes"))
      job.universes.push_back({u.at("runs_on").get<int>(),
                               PopulationLog::restore(u.at("count"), u.at("first"), u.at("last"), u.at("min"),
                                                      u.at("max"), u.at("all").get<std::vector<std::uint64_t>>(),
                                                      u.at("keeps_all").get<bool>())});
  }
  job.where = fmt::format("{} ranks ({})", parts.size(), fmt::join(places, "; "));
  return job;
}

}  // namespace streampipe::cli
