// SPDX-License-Identifier: Apache-2.0
// Report of a gray run: time split table and JSON (see gray_report.hpp).

#include "gray/gray_report.hpp"

#include "streampipe/report/table.hpp"
#include "streampipe/tools/gray_bound.hpp"

#include <fmt/format.h>

namespace streampipe::bench {
namespace {

double write_ms(const tools::gray::RunSummary& s) {
  double total = 0;
  for (const auto& f : s.files) total += f.write_ms;
  return total;
}

}  // namespace

std::string gray_time_table(const tools::gray::RunSummary& s) {
  const auto t = tools::gray::split_time(s.records, s.wall_ms);
  const bool gpu = s.backend == "gpu";
  const bool nvjpeg = s.decode == "gpu";  // the lanes decode; the workers only read (most) files
  report::Table table({"stage", "summed ms", "busy ms", "busy / wall", "per image ms"},
                      {report::Align::left, report::Align::right, report::Align::right, report::Align::right,
                       report::Align::right});
  const double n = static_cast<double>(std::max<std::size_t>(1, s.ok + s.failed));
  const auto row = [&](const std::string& name, double summed, double busy) {
    table.add_row({name, fmt::format("{:.1f}", summed), busy >= 0 ? fmt::format("{:.1f}", busy) : "",
                   busy >= 0 && t.wall_ms > 0 ? fmt::format("{:.1f}%", 100 * busy / t.wall_ms) : "",
                   fmt::format("{:.3f}", summed / n)});
  };
  row(nvjpeg ? "read (+ CPU decode of fallbacks) (host workers)" : "read + decode + to RGB (host workers)", t.decode_ms,
      t.decode_busy_ms);
  row(gpu ? "H2D copy" : "copy in (host lane)", t.h2d_ms, -1);
  row(nvjpeg ? "nvJPEG decode + luma kernel" : gpu ? "luma kernel" : "luma (host lane)", t.compute_ms, -1);
  row(gpu ? "D2H copy" : "copy out (host lane)", t.d2h_ms, -1);
  row(gpu ? "device (H2D + kernel + D2H, all lanes)" : "lanes (copies + luma)", t.h2d_ms + t.compute_ms + t.d2h_ms,
      t.device_busy_ms);
  row("encode + atomic write (host workers)", t.encode_ms, t.encode_busy_ms);
  row("  of which writing (temporary file, rename)", write_ms(s), -1);
  table.add_row({"outputs flushed to disk after the last write", fmt::format("{:.1f}", s.sync_ms), "", "", ""});
  std::string text = table.str(fmt::format("where the time went in {:.1f} ms wall (summed: over all files and threads; "
                                           "busy: some worker or lane active)",
                                           t.wall_ms));
  if (s.host_start_files > 0)
    text += fmt::format("the workers' rows include the {} file(s) host threads converted whole while the engine "
                        "started (their luma under read + decode)\n",
                        s.host_start_files);
  return text;
}

namespace {

nlohmann::json bound_json(const tools::gray::RunSummary& s) {
  const auto b = tools::gray::run_bound(s);
  if (b.stages.empty()) return nullptr;
  nlohmann::json stages = nlohmann::json::array();
  for (const auto& l : b.stages)
    stages.push_back({{"stage", l.stage}, {"share", l.share}, {"capacity", l.capacity}, {"busy_ms", l.busy_ms}});
  return {{"stage", b.bound_stage().stage},
          {"share", b.bound_stage().share},
          {"decode_share", b.decode_share},
          {"encode_share", b.encode_share},
          {"stages", std::move(stages)}};
}

}  // namespace

std::string gray_bound_line(const tools::gray::RunSummary& s) {
  const auto b = tools::gray::run_bound(s);
  if (b.stages.empty()) return {};
  const auto describe = [&](const tools::gray::StageLoad& l) {
    const std::string of = l.stage == "host workers" ? fmt::format("{} thread(s)", l.capacity)
                           : l.stage == "device"     ? fmt::format("{} GPU(s)", l.capacity)
                                                     : fmt::format("{} lane(s)", l.capacity);
    std::string text = fmt::format("{} busy {:.0f}% of {}", l.stage, 100 * l.share, of);
    if (l.stage == "host workers")
      text += fmt::format(" ({} {:.0f}%, encode + write {:.0f}%)", s.decode == "gpu" ? "read" : "read + decode",
                          100 * b.decode_share, 100 * b.encode_share);
    return text;
  };
  std::string line = fmt::format("bound by: {}", describe(b.bound_stage()));
  for (std::size_t i = 0; i < b.stages.size(); ++i)
    if (i != b.bound) line += "; " + describe(b.stages[i]);
  return line + " (over the conversion's wall time)";
}

nlohmann::json gray_run_json(const tools::gray::RunSummary& s, bool files) {
  const auto t = tools::gray::split_time(s.records, s.wall_ms);
  nlohmann::json j = {{"files", s.ok + s.failed},
                      {"ok", s.ok},
                      {"failed", s.failed},
                      {"bytes_in", s.bytes_in},
                      {"bytes_out", s.bytes_out},
                      {"pixels", s.pixels},
                      {"wall_ms", s.wall_ms},
                      {"sync_ms", s.sync_ms},
                      {"images_per_s", s.images_per_s()},
                      {"backend", s.backend},
                      {"backend_note", s.backend_note},
                      {"device", s.device},
                      {"engine", s.engine},
                      {"decode", s.decode},
                      {"gpu_decoded", s.gpu_decoded},
                      {"decode_fallbacks", s.fallbacks},
                      {"host_start", s.host_start},
                      {"host_start_files", s.host_start_files},
                      {"gpus_found_ms", s.gpus_found_ms},
                      {"codecs_ready_ms", s.codecs_ready_ms},
                      {"engine_ready_ms", s.engine_ready_ms},
                      {"time_ms",
                       {{"decode", t.decode_ms},
                        {"h2d", t.h2d_ms},
                        {"compute", t.compute_ms},
                        {"d2h", t.d2h_ms},
                        {"encode", t.encode_ms},
                        {"write", write_ms(s)},
                        {"decode_busy", t.decode_busy_ms},
                        {"encode_busy", t.encode_busy_ms},
                        {"device_busy", t.device_busy_ms}}},
                      {"device_share", t.device_share()},
                      {"bound", bound_json(s)},
                      {"timeline", s.timeline}};
  nlohmann::json failures = nlohmann::json::array();
  for (const auto& f : s.files)
    if (!f.ok) failures.push_back({{"input", f.input.string()}, {"error", f.error}});
  j["failures"] = failures;
  if (files) {
    nlohmann::json list = nlohmann::json::array();
    for (const auto& f : s.files) {
      nlohmann::json e = {{"input", f.input.string()}, {"output", f.output.string()}, {"ok", f.ok},
                          {"bytes_in", f.bytes_in}};
      if (!f.decoder.empty()) e["decoder"] = f.decoder;
      if (!f.fallback.empty()) e["decode_fallback"] = f.fallback;
      if (f.host_start) e["host_start"] = true;
      if (f.ok) {
        e["bytes_out"] = f.bytes_out;
        e["width"] = f.width;
        e["height"] = f.height;
        e["channels"] = f.channels;
        e["bit_depth"] = f.bit_depth;
      } else {
        e["error"] = f.error;
      }
      list.push_back(std::move(e));
    }
    j["file_results"] = list;
  }
  return j;
}

}  // namespace streampipe::bench
