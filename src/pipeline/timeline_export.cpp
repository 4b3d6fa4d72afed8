// SPDX-License-Identifier: Apache-2.0
// Timeline exports. Rows per device: one per copy direction (a single DMA engine each), one per lane
// for compute, and one for the host workers' staging. Chrome-trace "X" events carry times in
// microseconds; Perfetto and chrome://tracing open the file as it is.

#include "streampipe/pipeline/timeline.hpp"

#include "streampipe/pipeline/device_set.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <vector>
#include <limits>

namespace streampipe::pipeline {
namespace {

struct Row {
  int order;
  std::string name;
};

// A device's rows together, the CPU's lanes first, then the GPUs in order: each has its own
// copy engines (the CPU's lanes copy with memcpy) and lanes.
Row row_of(const StageRecord& r) {
  const int base = std::max(r.device + 1, 0) * 100000;
  const std::string device = r.device >= 0 ? fmt::format("GPU {} ", r.device)
                             : r.device == kCpuDevice ? std::string("CPU ")
                                                      : std::string();
  switch (r.stage) {
    case Stage::h2d: return {base, device + "copy H2D"};
    case Stage::d2h: return {base + 1, device + "copy D2H"};
    case Stage::compute: return {base + 10 + std::max(r.lane, 0), fmt::format("{}lane {} compute", device, r.lane)};
    case Stage::stage_in:
    case Stage::stage_out:
    case Stage::queue: break;
  }
  return {1 << 30, "host staging"};  // last, below every device
}

const char* colour_of(Stage s) {
  switch (s) {
    case Stage::h2d: return "#4e79a7";
    case Stage::d2h: return "#59a14f";
    case Stage::compute: return "#e15759";
    case Stage::stage_in: return "#f28e2b";
    case Stage::stage_out: return "#b07aa1";
    case Stage::queue: break;
  }
  return "#bab0ac";
}

std::string items_text(const StageRecord& r) {
  return r.items == 1 ? fmt::format("item {}", r.first_item)
                      : fmt::format("items {}-{}", r.first_item, r.first_item + r.items - 1);
}

}  // namespace

nlohmann::json Timeline::chrome_trace(const std::string& process_name) const {
  const auto recs = records();
  double t0 = std::numeric_limits<double>::infinity();
  for (const auto& r : recs) t0 = std::min(t0, r.start_ms);
  nlohmann::json events = nlohmann::json::array();
  events.push_back({{"name", "process_name"}, {"ph", "M"}, {"pid", 1}, {"args", {{"name", process_name}}}});
  std::map<int, std::string> rows;
  for (const auto& r : recs) {
    const Row row = row_of(r);
    rows.emplace(row.order, row.name);
    events.push_back({{"name", fmt::format("{} {}", stage_name(r.stage), items_text(r))},
                      {"cat", stage_name(r.stage)},
                      {"ph", "X"},
                      {"pid", 1},
                      {"tid", row.order},
                      {"ts", (r.start_ms - t0) * 1000.0},
                      {"dur", std::max(0.0, r.end_ms - r.start_ms) * 1000.0},
                      {"args", {{"bytes", r.bytes}, {"lane", r.lane}, {"first_item", r.first_item}, {"items", r.items}}}});
  }
  for (const auto& [order, name] : rows) {
    events.push_back({{"name", "thread_name"}, {"ph", "M"}, {"pid", 1}, {"tid", order}, {"args", {{"name", name}}}});
    events.push_back({{"name", "thread_sort_index"}, {"ph", "M"}, {"pid", 1}, {"tid", order}, {"args", {{"sort_index", order}}}});
  }
  return {{"traceEvents", events}, {"displayTimeUnit", "ms"}};
}

std::string Timeline::gantt_svg(const std::string& title) const {
  const auto recs = records();
  double t0 = std::numeric_limits<double>::infinity(), t1 = -t0;
  std::map<int, std::string> rows;
  for (const auto& r : recs) {
    t0 = std::min(t0, r.start_ms);
    t1 = std::max(t1, r.end_ms);
    const Row row = row_of(r);
    rows.emplace(row.order, row.name);
  }
  if (recs.empty()) t0 = t1 = 0;
  const double span = std::max(t1 - t0, 1e-3);
  // The title may hold several lines separated by '\n' (a name, then a description).
  std::vector<std::string> title_lines;
  for (std::size_t start = 0;;) {
    const std::size_t end = title.find('\n', start);
    title_lines.push_back(title.substr(start, end == std::string::npos ? std::string::npos : end - start));
    if (end == std::string::npos) break;
    start = end + 1;
  }
  constexpr double kLeft = 130, kWidth = 1000, kRowH = 22;
  const double kTop = 24 + 16.0 * static_cast<double>(title_lines.size());
  std::map<int, int> row_index;
  int i = 0;
  for (const auto& [order, name] : rows) row_index[order] = i++;
  const double height = kTop + kRowH * static_cast<double>(rows.size()) + 50;
  std::string svg = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\" font-family=\"sans-serif\" font-size=\"12\">\n"
      "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n",
      kLeft + kWidth + 20, height);
  for (std::size_t l = 0; l < title_lines.size(); ++l)
    svg += fmt::format("<text x=\"5\" y=\"{}\" font-size=\"{}\">{}</text>\n", 20 + 16 * l, l == 0 ? 14 : 11,
                       title_lines[l]);
  for (const auto& [order, name] : rows) {
    const double y = kTop + kRowH * row_index[order];
    svg += fmt::format("<text x=\"5\" y=\"{:.1f}\">{}</text>\n", y + kRowH * 0.7, name);
    svg += fmt::format("<line x1=\"{}\" x2=\"{}\" y1=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"#ddd\"/>\n", kLeft, kLeft + kWidth,
                       y + kRowH, y + kRowH);
  }
  for (const auto& r : recs) {
    const double y = kTop + kRowH * row_index[row_of(r).order];
    const double x = kLeft + (r.start_ms - t0) / span * kWidth;
    const double w = std::max(0.5, (r.end_ms - r.start_ms) / span * kWidth);
    svg += fmt::format(
        "<rect x=\"{:.2f}\" y=\"{:.1f}\" width=\"{:.2f}\" height=\"{:.1f}\" fill=\"{}\" stroke=\"white\" "
        "stroke-width=\"0.3\"><title>{} {}: {:.3f}-{:.3f} ms, {} bytes</title></rect>\n",
        x, y + 2, w, kRowH - 4, colour_of(r.stage), stage_name(r.stage), items_text(r), r.start_ms - t0, r.end_ms - t0, r.bytes);
  }
  // Time axis with about ten ticks at a round step.
  const double raw = span / 10;
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  const double step = raw / mag < 2 ? 2 * mag : raw / mag < 5 ? 5 * mag : 10 * mag;
  const double axis_y = kTop + kRowH * static_cast<double>(rows.size()) + 15;
  for (double t = 0; t <= span + 1e-9; t += step) {
    const double x = kLeft + t / span * kWidth;
    svg += fmt::format("<line x1=\"{0:.1f}\" x2=\"{0:.1f}\" y1=\"{1}\" y2=\"{2}\" stroke=\"#999\"/>"
                       "<text x=\"{0:.1f}\" y=\"{3}\" text-anchor=\"middle\">{4:g} ms</text>\n",
                       x, kTop, axis_y - 10, axis_y + 5, t);
  }
  const std::array<Stage, 5> legend = {Stage::h2d, Stage::compute, Stage::d2h, Stage::stage_in, Stage::stage_out};
  double lx = kLeft;
  for (Stage s : legend) {
    svg += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"12\" height=\"12\" fill=\"{}\"/><text x=\"{}\" y=\"{}\">{}</text>\n", lx,
                       axis_y + 15, colour_of(s), lx + 16, axis_y + 25, stage_name(s));
    lx += 110;
  }
  svg += "</svg>\n";
  return svg;
}

}  // namespace streampipe::pipeline
