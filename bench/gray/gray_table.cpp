// SPDX-License-Identifier: Apache-2.0
// The table of `bench gray` (see gray_table.hpp).

#include "gray/gray_table.hpp"

#include <fmt/format.h>

namespace streampipe::bench::gray_bench {

namespace {

std::string seconds(const nlohmann::json& summary, const char* key = "median") {
  return summary.is_object() ? fmt::format("{:.3f}", summary.value(key, 0.0) / 1e3) : "-";
}

std::string decoders(const Row& r) {
  if (r.peer) return r.fields.value("library", std::string("?"));
  const auto& d = r.fields.value("decoders", nlohmann::json::object());
  if (d.size() == 1) return d.begin().key() == "gpu" ? "nvJPEG" : d.begin().key();
  std::string out;
  for (const auto& [name, files] : d.items())
    out += fmt::format("{}{} {}", out.empty() ? "" : ", ", name == "gpu" ? "nvJPEG" : name, files.get<int>());
  return out.empty() ? "?" : out;
}

std::string bound(const Row& r) {
  const auto& b = r.fields.value("bound", nlohmann::json(nullptr));
  if (!b.is_object()) return "-";
  std::string stage = b.value("stage", std::string("?"));
  if (stage == "host workers") stage = "workers";
  return fmt::format("{} {:.0f}%", stage, 100 * b.value("share", 0.0));
}

}  // namespace

Table gray_table(std::vector<Row> rows, const Yardsticks& at, io::ImageFormat format, std::string title) {
  Table t;
  t.name = fmt::format("gray-{}", io::to_string(format));
  t.title = std::move(title);
  t.headers = {"command", "backend", "decode", "wall s", "min", "max", "images/s", "vs Pillow", "vs host",
               "start-up s", "outside conv. s", "bound", "ok"};
  t.align.assign(t.headers.size(), report::Align::right);
  t.align[0] = t.align[1] = t.align[2] = t.align[11] = t.align[12] = report::Align::left;
  // A row whose outputs were wrong is no yardstick.
  const auto rate = [&](int i) {
    if (i < 0) return 0.0;
    const Row& r = rows[static_cast<std::size_t>(i)];
    return r.verified && !r.values.empty() ? r.summary().median : 0.0;
  };
  const double peer = rate(at.peer), host = rate(at.host);
  for (auto& r : rows) {
    const double median = r.values.empty() ? 0.0 : r.summary().median;
    const auto& wall = r.fields.value("command_wall_ms", nlohmann::json(nullptr));
    if (peer > 0) r.fields["speedup_vs_pillow"] = median / peer;
    if (host > 0 && !r.peer) r.fields["speedup_vs_host"] = median / host;
    r.cells = {r.name,
               r.peer ? r.fields.value("library", std::string("?")) : r.fields.value("backend", std::string("?")),
               decoders(r),
               seconds(wall),
               seconds(wall, "min"),
               seconds(wall, "max"),
               fmt::format("{:.1f}", median),
               peer > 0 ? fmt::format("{:.2f}x", median / peer) : "-",
               host > 0 && !r.peer ? fmt::format("{:.2f}x", median / host) : "-",
               r.peer ? "-" : seconds(r.fields.value("startup_ms", nlohmann::json(nullptr))),
               r.peer ? "-" : seconds(r.fields.value("outside_conversion_ms", nlohmann::json(nullptr))),
               r.peer ? "-" : bound(r),
               r.verified ? "yes" : "WRONG"};
  }
  t.rows = std::move(rows);
  return t;
}

void add_targets(Table& t, const Yardsticks& at, io::ImageFormat format) {
  if (at.tool < 0 || t.rows[static_cast<std::size_t>(at.tool)].values.empty()) return;
  const Row& tool = t.rows[static_cast<std::size_t>(at.tool)];
  // Issue 23: the whole command on 300-500 1080p JPEGs (quality 90), H100 host, 16 cores.
  const double rate_target = format == io::ImageFormat::png ? 800 : 1500;
  constexpr double kVsPillow = 4, kVsHost = 3;
  const double rate = tool.summary().median;
  nlohmann::json targets = {{"images_per_s", {{"target", rate_target}, {"here", rate}}}};
  std::string note = fmt::format("targets of the tool's defaults (issue 23, on an H100 host with 16 cores): >= {:.0f} "
                                 "images/s (here {:.1f})",
                                 rate_target, rate);
  if (tool.fields.contains("speedup_vs_pillow")) {
    const double x = tool.fields["speedup_vs_pillow"].get<double>();
    targets["speedup_vs_pillow"] = {{"target", kVsPillow}, {"here", x}};
    note += fmt::format(", >= {:.0f}x Pillow (here {:.2f}x)", kVsPillow, x);
  }
  if (tool.fields.contains("speedup_vs_host") && tool.fields.value("backend", std::string()) != "host") {
    const double x = tool.fields["speedup_vs_host"].get<double>();
    targets["speedup_vs_host"] = {{"target", kVsHost}, {"here", x}};
    note += fmt::format(", >= {:.0f}x its host backend (here {:.2f}x)", kVsHost, x);
  }
  t.fields["targets"] = std::move(targets);
  t.notes.push_back(note);
}

}  // namespace streampipe::bench::gray_bench
