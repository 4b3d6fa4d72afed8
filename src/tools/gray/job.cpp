// SPDX-License-Identifier: Apache-2.0
#include "streampipe/tools/gray/job.hpp"

#include "streampipe/mpi/gather.hpp"
#include "streampipe/pipeline/timeline.hpp"
#include "streampipe/report/json_schema.hpp"
#include "streampipe/report/trace_merge.hpp"
#include "streampipe/tools/gray/report.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <vector>

namespace streampipe::tools::gray {

JobReport gather_job(const mpi::Job& job, const RunSummary& mine, int my_status, bool with_trace,
                     const nlohmann::json& common) {
  nlohmann::json part = run_json(mine, true);
  part["rank"] = job.info().rank;
  part["host"] = job.host();
  part["status"] = my_status;
  if (with_trace) {
    pipeline::Timeline timeline;
    for (const auto& r : mine.records) timeline.add(r);
    part["trace"] = timeline.chrome_trace("streampipe gray");
  }
  auto parts = mpi::gather_parts(job, part);
  JobReport result;
  result.status = job.max_over_ranks(my_status);
  if (!parts) return result;
  result.leader = true;

  std::vector<nlohmann::json> runs;
  for (auto& p : *parts) runs.push_back(std::move(p.meta));
  std::size_t files = 0, ok = 0, failed = 0;
  double bytes_in = 0, bytes_out = 0, pixels = 0, wall_ms = 0;
  for (const auto& r : runs) {
    files += r.at("file_results").size();
    ok += r.at("ok").get<std::size_t>();
    failed += r.at("failed").get<std::size_t>();
    bytes_in += r.at("bytes_in").get<double>();
    bytes_out += r.at("bytes_out").get<double>();
    pixels += r.at("pixels").get<double>();
    wall_ms = std::max(wall_ms, r.at("wall_ms").get<double>());  // the job ends with its slowest rank
  }
  const double images_per_s = wall_ms > 0 ? static_cast<double>(ok) * 1e3 / wall_ms : 0;
  result.text = fmt::format("gray: {} file(s) over {} ranks: {} ok, {} failed; {:.1f} MB in, {:.1f} MB out, {:.1f} Mpixel\n",
                            files, runs.size(), ok, failed, bytes_in / 1e6, bytes_out / 1e6, pixels / 1e6);
  result.text += fmt::format("  {:.2f} s (the slowest rank), {:.1f} images/s over all ranks\n", wall_ms / 1e3,
                             images_per_s);
  for (const auto& r : runs)
    result.text += fmt::format("  rank {} on {} ({}): {} file(s), {} failed, {:.2f} s, {:.1f} images/s\n",
                               r.at("rank").get<int>(), r.at("host").get<std::string>(),
                               r.at("device").get<std::string>(), r.at("file_results").size(),
                               r.at("failed").get<std::size_t>(), r.at("wall_ms").get<double>() / 1e3,
                               r.at("images_per_s").get<double>());
  if (failed) result.text += fmt::format("  {} file(s) failed (each named on stderr with its rank)\n", failed);
  if (with_trace) {
    std::vector<nlohmann::json> traces;
    std::vector<std::string> names;
    for (auto& r : runs) {
      traces.push_back(std::move(r["trace"]));
      r.erase("trace");
      names.push_back(fmt::format("{} {} (gray)", r.at("host").get<std::string>(), r.at("device").get<std::string>()));
    }
    result.trace = report::merge_chrome_traces(traces, names);
  }
  nlohmann::json j = common;
  j["ranks"] = runs.size();
  j["files"] = files;
  j["ok"] = ok;
  j["failed"] = failed;
  j["bytes_in"] = bytes_in;
  j["bytes_out"] = bytes_out;
  j["pixels"] = pixels;
  j["wall_ms"] = wall_ms;
  j["images_per_s"] = images_per_s;
  j["per_rank"] = std::move(runs);
  j["status"] = result.status;
  result.json = report::stamped(std::move(j), "gray.ranks");
  return result;
}

}  // namespace streampipe::tools::gray
