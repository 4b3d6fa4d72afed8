// SPDX-License-Identifier: Apache-2.0
// Report of a gray run: time split table and JSON (see tools/gray/report.hpp).

#include "streampipe/tools/gray/report.hpp"

#include "streampipe/report/table.hpp"
#include "streampipe/tools/gray/bound.hpp"

#include <fmt/format.h>

namespace streampipe::tools::gray {
namespace {

double write_ms(const RunSummary& s) {
  double total = 0;
  for (const auto& f : s.files) total += f.write_ms;
  return total;
}

}  // namespace

std::string time_table(const RunSummary& s) {
  const auto t = split_time(s.records, s.wall_ms);
  const bool gpu = s.backend != "host";
  const bool nvjpeg = s.decode != "cpu";  // a GPU's lanes decode; the workers only read (most of) their files
  report::Table table({"stage", "summed ms", "busy ms", "busy / wall", "per image ms"},
                      {report::Align::left, report::Align::right, report::Align::right, report::Align::right,
                       report::Align::right});
  const double n = static_cast<double>(std::max<std::size_t>(1, s.ok + s.failed));
  const auto row = [&](const std::string& name, double summed, double busy) {
    table.add_row({name, fmt::format("{:.1f}", summed), busy >= 0 ? fmt::format("{:.1f}", busy) : "",
                   busy >= 0 && t.wall_ms > 0 ? fmt::format("{:.1f}%", 100 * busy / t.wall_ms) : "",
                   fmt::format("{:.3f}", summed / n)});
  };
  row(nvjpeg ? "read (+ CPU decode of fallbacks) (host workers)" : "read + decode (host workers)", t.decode_ms,
      t.decode_busy_ms);
  row(gpu ? "H2D copy (CPU lanes: memcpy)" : "copy in (CPU lanes)", t.h2d_ms, -1);
  row(nvjpeg ? "nvJPEG decode + luma kernel (CPU lanes: luma)" : gpu ? "luma kernel (CPU lanes: luma)" : "luma (CPU lanes)",
      t.compute_ms, -1);
  row(gpu ? "D2H copy (CPU lanes: memcpy)" : "copy out (CPU lanes)", t.d2h_ms, -1);
  row(gpu ? "lanes (copies + luma, every device)" : "lanes (copies + luma)", t.h2d_ms + t.compute_ms + t.d2h_ms,
      t.device_busy_ms);
  row("encode + atomic write (host workers)", t.encode_ms, t.encode_busy_ms);
  row("  of which writing (temporary file, rename)", write_ms(s), -1);
  table.add_row({"outputs flushed to disk after the last write", fmt::format("{:.1f}", s.sync_ms), "", "", ""});
  return table.str(fmt::format("where the time went in {:.1f} ms wall (summed: over all files and threads; "
                                "busy: some worker or lane active)",
                                t.wall_ms));
}

std::vector<std::string> device_lines(const RunSummary& s) {
  std::vector<std::string> lines;
  for (const auto& m : s.devices) {
    const auto& d = m.device;
    using DeviceState = pipeline::DeviceReport::State;
    if (d.state == DeviceState::ready || d.state == DeviceState::lost) {
      std::string line = fmt::format("{}: {} file(s), {:.0f}% of the work, {:.1f} images/s", d.name, m.files,
                                     100 * m.share, m.images_per_s);
      if (d.device != pipeline::kCpuDevice)
        line += fmt::format("; joined {:.2f} s after the start (its own start {:.2f} s)", d.joined_ms / 1e3,
                            d.start_ms / 1e3);
      if (d.state == DeviceState::lost) line += fmt::format("; lost: {}", d.reason);
      lines.push_back(std::move(line));
    } else if (d.state == DeviceState::starting) {
      // Its start had not ended when the last file did (the engine judged it worth starting).
      lines.push_back(fmt::format("{}: still starting when the run ended, so it took no file", d.name));
    } else {
      lines.push_back(fmt::format("{}: {}{}", d.name, pipeline::device_state_name(d.state),
                                  d.reason.empty() ? std::string() : ": " + d.reason));
    }
  }
  if (!s.gpus_left_out.empty()) lines.push_back("the GPUs: not started: " + s.gpus_left_out);
  return lines;
}

nlohmann::json devices_json(const RunSummary& s) {
  nlohmann::json list = nlohmann::json::array();
  for (const auto& m : s.devices) {
    const auto& d = m.device;
    list.push_back({{"device", d.device == pipeline::kCpuDevice ? nlohmann::json("cpu") : nlohmann::json(d.device)},
                    {"name", d.name},
                    {"simulated", d.simulated},
                    {"state", pipeline::device_state_name(d.state)},
                    {"reason", d.reason},
                    {"lanes", d.lanes},
                    {"joined_ms", d.joined_ms >= 0 ? nlohmann::json(d.joined_ms) : nlohmann::json(nullptr)},
                    {"start_ms", d.start_ms},
                    {"setup_ms", d.setup_ms},
                    {"files", m.files},
                    {"share", m.share},
                    {"images_per_s", m.images_per_s},
                    // The scheduler's measure of it (ms a file from taking a slot to giving it
                    // back) for each kind of file the run deals apart; 0 where not measured.
                    {"ms_per_file", {{"host_decoded", d.ms_per_unit[0]}, {"for_nvjpeg", d.ms_per_unit[1]}}}});
  }
  return list;
}

namespace {

nlohmann::json bound_json(const RunSummary& s) {
  const auto b = run_bound(s);
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

std::string bound_line(const RunSummary& s) {
  const auto b = run_bound(s);
  if (b.stages.empty()) return {};
  const auto describe = [&](const StageLoad& l) {
    const std::string of = l.stage == "host workers" ? fmt::format("{} thread(s)", l.capacity)
                           : l.stage == "device"     ? fmt::format("{} GPU(s)", l.capacity)
                                                     : fmt::format("{} lane(s)", l.capacity);
    std::string text = fmt::format("{} busy {:.0f}% of {}", l.stage, 100 * l.share, of);
    if (l.stage == "host workers")
      text += fmt::format(" ({} {:.0f}%, encode + write {:.0f}%)", s.decode == "cpu" ? "read + decode" : "read (+ decode)",
                          100 * b.decode_share, 100 * b.encode_share);
    return text;
  };
  std::string line = fmt::format("bound by: {}", describe(b.bound_stage()));
  for (std::size_t i = 0; i < b.stages.size(); ++i)
    if (i != b.bound) line += "; " + describe(b.stages[i]);
  return line + " (over the conversion's wall time)";
}

nlohmann::json run_json(const RunSummary& s, bool files) {
  const auto t = split_time(s.records, s.wall_ms);
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
                      {"device", s.device},
                      {"engine", s.engine},
                      {"devices", devices_json(s)},
                      {"gpus_left_out", s.gpus_left_out},
                      {"decode", s.decode},
                      {"encode", s.encode},
                      {"encoder", s.encoder},
                      {"gpu_decoded", s.gpu_decoded},
                      {"decode_fallbacks", s.fallbacks},
                      {"decoded_to", s.decoded_to},
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
      if (!f.decoded_to.empty()) e["decoded_to"] = f.decoded_to;
      if (f.device != -1) e["device"] = f.device == pipeline::kCpuDevice ? nlohmann::json("cpu") : nlohmann::json(f.device);
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

}  // namespace streampipe::tools::gray
