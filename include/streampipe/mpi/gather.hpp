// SPDX-License-Identifier: Apache-2.0
#pragma once
// The one gather of a tool's job: every rank sends its part of the result (a JSON
// description and, for bulk data such as a band of pixels, raw bytes) and rank 0 gets every
// part in rank order, to combine into the job's one report. Also the words the tools' reports
// use for where each rank ran. Collective, like Job's members.

#include "streampipe/mpi/job.hpp"

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace streampipe::mpi {

struct RankPart {
  nlohmann::json meta;  // what the rank said about its part
  std::string bytes;    // its bulk data, as it sent it
};

// Collective. At rank 0 every rank's part, in rank order (alone: this one); elsewhere nullopt
// once its part is sent. Throws std::runtime_error when a part cannot be read back.
[[nodiscard]] std::optional<std::vector<RankPart>> gather_parts(const Job& job, const nlohmann::json& meta,
                                                                std::string_view bytes = {});

// Where this rank ran, for the job's report: "rank 1 on node7 GPU 0 (NVIDIA H100)".
[[nodiscard]] std::string rank_place(const Job& job, std::string_view device);
// The job's places together: "3 ranks (rank 0 on ...; rank 1 on ...; rank 2 on ...)".
[[nodiscard]] std::string job_place(const std::vector<std::string>& rank_places);

}  // namespace streampipe::mpi
