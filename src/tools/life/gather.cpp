// SPDX-License-Identifier: Apache-2.0
#include "gather.hpp"

#include "streampipe/mpi/gather.hpp"

#include <algorithm>

namespace streampipe::tools::life {

std::optional<JobLife> gather_life(const mpi::Job& job, const std::vector<UniverseOutcome>& mine, double stepping_ms,
                                   double output_ms, const std::string& where) {
  nlohmann::json part = {{"stepping_ms", stepping_ms},
                         {"output_ms", output_ms},
                         {"where", mpi::rank_place(job, where)},
                         {"universes", nlohmann::json::array()}};
  for (const auto& u : mine) {
    const auto& p = u.populations;
    part["universes"].push_back({{"runs_on", u.runs_on}, {"count", p.count()}, {"first", p.first()},
                                 {"last", p.last()}, {"min", p.min()}, {"max", p.max()}, {"all", p.all()},
                                 {"keeps_all", p.keeps_all()}});
  }
  const std::optional<std::vector<mpi::RankPart>> parts = mpi::gather_parts(job, part);
  if (!parts) return std::nullopt;
  JobLife life;
  std::vector<std::string> places;
  for (const auto& rank_part : *parts) {
    const nlohmann::json& j = rank_part.meta;
    life.stepping_ms = std::max(life.stepping_ms, j.at("stepping_ms").get<double>());  // the ranks step at once
    life.output_ms = std::max(life.output_ms, j.at("output_ms").get<double>());
    places.push_back(j.at("where").get<std::string>());
    for (const auto& u : j.at("universes"))
      life.universes.push_back({u.at("runs_on").get<int>(),
                                PopulationLog::restore(u.at("count"), u.at("first"), u.at("last"), u.at("min"),
                                                       u.at("max"), u.at("all").get<std::vector<std::uint64_t>>(),
                                                       u.at("keeps_all").get<bool>())});
  }
  life.where = mpi::job_place(places);
  return life;
}

}  // namespace streampipe::tools::life
