// SPDX-License-Identifier: Apache-2.0
#include "streampipe/mpi/gather.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <stdexcept>

namespace streampipe::mpi {

// One string per rank: the description, a NUL, the bytes. A JSON text never holds a raw NUL
// (dump() escapes control characters), so the first one ends the description.
std::optional<std::vector<RankPart>> gather_parts(const Job& job, const nlohmann::json& meta, std::string_view bytes) {
  std::string message = meta.dump();
  message += '\0';
  message.append(bytes);
  std::vector<std::string> messages = job.gather_strings(message);
  if (!job.leader()) return std::nullopt;
  std::vector<RankPart> parts;
  parts.reserve(messages.size());
  for (std::size_t r = 0; r < messages.size(); ++r) {
    const std::string& m = messages[r];
    const std::size_t end = m.find('\0');
    if (end == std::string::npos) throw std::runtime_error(fmt::format("rank {} sent a part without its end", r));
    try {
      parts.push_back({nlohmann::json::parse(std::string_view(m).substr(0, end)), m.substr(end + 1)});
    } catch (const nlohmann::json::exception& e) {
      throw std::runtime_error(fmt::format("rank {} sent a part that is not JSON: {}", r, e.what()));
    }
  }
  return parts;
}

std::string rank_place(const Job& job, std::string_view device) {
  return fmt::format("rank {} on {} {}", job.info().rank, job.host(), device);
}

std::string job_place(const std::vector<std::string>& rank_places) {
  return fmt::format("{} ranks ({})", rank_places.size(), fmt::join(rank_places, "; "));
}

}  // namespace streampipe::mpi
