// SPDX-License-Identifier: Apache-2.0
#include "serve/plot.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

namespace streampipe::bench::serve {
namespace {

std::string escape(const std::string& s) {
  std::string out;
  for (const char ch : s) {
    switch (ch) {
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '&': out += "&amp;"; break;
      case '"': out += "&quot;"; break;
      default: out += ch;
    }
  }
  return out;
}

// A "nice" step (1, 2 or 5 × 10^k) giving about `count` ticks over `range`.
double nice_step(double range, int count) {
  const double raw = range / count;
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  const double norm = raw / mag;
  return (norm < 1.5 ? 1 : norm < 3.5 ? 2 : norm < 7.5 ? 5 : 10) * mag;
}

std::string format_rate(double v) {
  if (v >= 1e6) return fmt::format("{:g}M", v / 1e6);
  if (v >= 1e3) return fmt::format("{:g}k", v / 1e3);
  return fmt::format("{:g}", v);
}

}  // namespace

std::string throughput_latency_svg(const std::string& title, const std::vector<PlotSeries>& series) {
  constexpr double W = 820, H = 520, left = 90, right = 170, top = 50, bottom = 60;
  const double pw = W - left - right, ph = H - top - bottom;
  double xmin = std::numeric_limits<double>::max(), xmax = 0, ymax = 0;
  for (const auto& s : series)
    for (const auto& p : s.points) {
      if (p.p99_ms <= 0) continue;
      xmin = std::min(xmin, p.p99_ms);
      xmax = std::max(xmax, p.p99_ms);
      ymax = std::max(ymax, p.throughput);
    }
  if (xmax <= 0) {
    xmin = 0.01;
    xmax = 1;
  }
  // Log x over whole decades; linear y from 0 to a nice bound.
  const double lx0 = std::floor(std::log10(xmin)), lx1 = std::max(lx0 + 1, std::ceil(std::log10(xmax)));
  const double ystep = nice_step(ymax > 0 ? ymax : 1, 5);
  const double ytop = std::max(ystep, std::ceil((ymax > 0 ? ymax : 1) / ystep) * ystep);
  const auto X = [&](double v) { return left + (std::log10(v) - lx0) / (lx1 - lx0) * pw; };
  const auto Y = [&](double v) { return top + ph - v / ytop * ph; };

  std::string svg = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" height=\"{1}\" viewBox=\"0 0 {0} {1}\" "
      "font-family=\"sans-serif\" font-size=\"12\">\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n",
      W, H);
  svg += fmt::format("<text x=\"{}\" y=\"28\" text-anchor=\"middle\" font-size=\"15\">{}</text>\n", left + pw / 2,
                     escape(title));
  // Grid and ticks.
  for (double e = lx0; e <= lx1 + 1e-9; e += 1) {
    for (const double m : {1.0, 2.0, 5.0}) {
      const double v = m * std::pow(10.0, e);
      if (std::log10(v) > lx1 + 1e-9) break;
      const double x = X(v);
      svg += fmt::format("<line x1=\"{0:.1f}\" y1=\"{1}\" x2=\"{0:.1f}\" y2=\"{2}\" stroke=\"{3}\"/>\n", x, top, top + ph,
                         m == 1.0 ? "#ccc" : "#eee");
      svg += fmt::format("<text x=\"{:.1f}\" y=\"{}\" text-anchor=\"middle\">{:g}</text>\n", x, top + ph + 18, v);
    }
  }
  for (double v = 0; v <= ytop + ystep / 2; v += ystep) {
    const double y = Y(v);
    svg += fmt::format("<line x1=\"{}\" y1=\"{:.1f}\" x2=\"{}\" y2=\"{:.1f}\" stroke=\"#ddd\"/>\n", left, y, left + pw, y);
    svg += fmt::format("<text x=\"{}\" y=\"{:.1f}\" text-anchor=\"end\">{}</text>\n", left - 8, y + 4, format_rate(v));
  }
  svg += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"none\" stroke=\"black\"/>\n", left, top,
                     pw, ph);
  svg += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">p99 latency (ms, log scale)</text>\n",
                     left + pw / 2, H - 15);
  svg += fmt::format(
      "<text x=\"20\" y=\"{0}\" text-anchor=\"middle\" transform=\"rotate(-90 20 {0})\">throughput (requests/s)</text>\n",
      top + ph / 2);

  static constexpr const char* colors[] = {"#d62728", "#1f77b4", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b"};
  for (std::size_t i = 0; i < series.size(); ++i) {
    const char* color = colors[i % std::size(colors)];
    std::string points;
    for (const auto& p : series[i].points)
      if (p.p99_ms > 0) points += fmt::format("{:.1f},{:.1f} ", X(p.p99_ms), Y(p.throughput));
    svg += fmt::format("<polyline fill=\"none\" stroke=\"{}\" stroke-width=\"2\" points=\"{}\"/>\n", color, points);
    for (const auto& p : series[i].points) {
      if (p.p99_ms <= 0) continue;
      svg += fmt::format("<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"3\" fill=\"{}\"><title>{}: {} clients, {:.0f} req/s, "
                         "p99 {:.3f} ms</title></circle>\n",
                         X(p.p99_ms), Y(p.throughput), color, escape(series[i].name), p.clients, p.throughput, p.p99_ms);
      svg += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" font-size=\"9\" fill=\"{}\">{}</text>\n", X(p.p99_ms) + 4,
                         Y(p.throughput) - 4, color, p.clients);
    }
    const double ly = top + 10 + 20 * static_cast<double>(i);
    svg += fmt::format("<line x1=\"{0}\" y1=\"{1}\" x2=\"{2}\" y2=\"{1}\" stroke=\"{3}\" stroke-width=\"2\"/>\n",
                       left + pw + 15, ly, left + pw + 40, color);
    svg += fmt::format("<text x=\"{}\" y=\"{}\">{}</text>\n", left + pw + 45, ly + 4, escape(series[i].name));
  }
  svg += fmt::format("<text x=\"{}\" y=\"{}\" font-size=\"10\" fill=\"#555\">point labels: load</text>\n",
                     left + pw + 15, top + 20 + 20 * static_cast<double>(series.size()));
  svg += "</svg>\n";
  return svg;
}

}  // namespace streampipe::bench::serve
