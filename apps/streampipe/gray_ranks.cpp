// SPDX-License-Identifier: Apache-2.0
#include "gray_ranks.hpp"

#include "json_text.hpp"
#include "gray/gray_report.hpp"

#include "streampipe/pipeline/timeline.hpp"
#include "streampipe/report/json_schema.hpp"
#include "streampipe/report/trace_merge.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <vector>

namespace streampipe::cli {

int finish_gray_ranks(const Ranks& ranks, const tools::gray::RunSummary& mine, int my_status,
                      const GrayRankOutputs& wanted, Outputs& out) {
  nlohmann::json part = bench::gray_run_json(mine, true);
  part["rank"] = ranks.info().rank;
  part["host"] = ranks.host();
  part["status"] = my_status;
  if (!wanted.trace_path.empty()) {
    pipeline::Timeline timeline;
    for (const auto& r : mine.records) timeline.add(r);
    part["trace"] = timeline.chrome_trace("streampipe gray");
  }
  const std::vector<std::string> parts = ranks.gather(part.dump());
  const int status = ranks.job_status(my_status);
  if (!ranks.leader()) return status;

  std::vector<nlohmann::json> runs;
  for (const auto& text : parts) runs.push_back(nlohmann::json::parse(text));
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
  if (!wanted.quiet) {
    out.print("gray: {} file(s) over {} ranks: {} ok, {} failed; {:.1f} MB in, {:.1f} MB out, {:.1f} Mpixel\n", files,
              runs.size(), ok, failed, bytes_in / 1e6, bytes_out / 1e6, pixels / 1e6);
    out.print("  {:.2f} s (the slowest rank), {:.1f} images/s over all ranks\n", wall_ms / 1e3, images_per_s);
    for (const auto& r : runs)
      out.print("  rank {} on {} ({}): {} file(s), {} failed, {:.2f} s, {:.1f} images/s\n", r.at("rank").get<int>(),
                r.at("host").get<std::string>(), r.at("device").get<std::string>(), r.at("file_results").size(),
                r.at("failed").get<std::size_t>(), r.at("wall_ms").get<double>() / 1e3,
                r.at("images_per_s").get<double>());
    if (failed) out.print("  {} file(s) failed (each named on stderr with its rank)\n", failed);
  }
  if (!wanted.trace_path.empty()) {
    std::vector<nlohmann::json> traces;
    std::vector<std::string> names;
    for (auto& r : runs) {
      traces.push_back(std::move(r["trace"]));
      r.erase("trace");
      names.push_back(fmt::format("{} {} (gray)", r.at("host").get<std::string>(), r.at("device").get<std::string>()));
    }
    out.write(wanted.trace_path, json_text(report::merge_chrome_traces(traces, names), -1));
  }
  if (!wanted.json_path.empty()) {
    nlohmann::json j = wanted.common;
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
    j["status"] = status;
    out.write(wanted.json_path, json_text(report::stamped(std::move(j), "gray.ranks"), 2));
  }
  return status;
}

}  // namespace streampipe::cli
