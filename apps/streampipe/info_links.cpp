// SPDX-License-Identifier: Apache-2.0
#include "info_links.hpp"

#include "streampipe/cuda/aggregate_bandwidth.hpp"
#include "streampipe/cuda/slow_links.hpp"
#include "streampipe/report/table.hpp"

#include <fmt/format.h>

#include <array>
#include <utility>

namespace streampipe::cli {
namespace {

// The single-GPU path each aggregate figure is held against.
constexpr std::array<std::pair<const char*, const char*>, 3> kPaths{
    std::pair{"pinned_h2d", "aggregate_h2d"}, std::pair{"pinned_d2h", "aggregate_d2h"},
    std::pair{"bidirectional", "aggregate_bidirectional"}};

std::string gbps(double v) { return fmt::format("{:.1f}", v); }

}  // namespace

void report_links(const Outputs& out, const std::vector<Device>& devices, const std::vector<LinkLimits>& links,
                  const BandwidthOptions& options, nlohmann::json& j) {
  report::Table per_gpu({"GPU", "name", "pinned H2D", "pinned D2H", "both at once"},
                        {report::Align::right, report::Align::left, report::Align::right, report::Align::right,
                         report::Align::right});
  for (std::size_t i = 0; i < devices.size(); ++i)
    per_gpu.add_row({std::to_string(devices[i].index()), links[i].device_name, gbps(links[i].gbps("pinned_h2d")),
                     gbps(links[i].gbps("pinned_d2h")), gbps(links[i].gbps("bidirectional"))});
  out.print("{}", per_gpu.str("each GPU's link alone (GB/s, median)"));

  const AggregateBandwidth all = measure_aggregate(devices, options);
  report::Table table({"all at once", "GB/s", "min", "max", "sum of the links alone"});
  nlohmann::json aj = {{"devices", all.devices}, {"bytes_per_copy_per_device", options.bytes},
                       {"runs", options.runs}, {"warmup", options.warmup}, {"figures", nlohmann::json::object()}};
  for (const auto& [single, aggregate] : kPaths) {
    double sum = 0;
    for (const auto& l : links) sum += l.gbps(single);
    for (const auto& f : all.figures) {
      if (f.path != aggregate) continue;
      table.add_row({f.label, gbps(f.median_gbps), gbps(f.min_gbps), gbps(f.max_gbps), gbps(sum)});
      aj["figures"][f.path] = {{"median_gbps", f.median_gbps}, {"min_gbps", f.min_gbps}, {"max_gbps", f.max_gbps},
                               {"bytes", f.bytes}, {"label", f.label}, {"sum_of_links_gbps", sum}};
    }
  }
  out.print("{}", table.str(fmt::format("{} GPU(s) copying at once, each from its own thread, stream and pinned "
                                        "buffer: all bytes / (last end - first start), median of {} runs",
                                        devices.size(), options.runs)));
  j["aggregate"] = aj;

  j["slow_links"] = nlohmann::json::array();
  if (devices.size() < 2) {
    out.print("one GPU: no other link to compare its link with\n");
    return;
  }
  bool any = false;
  for (const auto& [single, aggregate] : kPaths) {
    std::vector<double> figures;
    for (const auto& l : links) figures.push_back(l.gbps(single));
    for (const SlowLink& s : slow_links(figures, kSlowLinkThreshold)) {
      any = true;
      const Device& d = devices[s.index];
      out.print("slow link: GPU {} ({}) {} at {:.1f} GB/s is below {:.0f}% of the other GPUs' median {:.1f} GB/s "
                "(behind a slower PCIe switch, or a link trained at a lower speed or width: see its PCIe line)\n",
                d.index(), links[s.index].device_name, single, s.gbps, 100 * kSlowLinkThreshold, s.peers_median);
      j["slow_links"].push_back({{"device", d.index()}, {"path", single}, {"gbps", s.gbps},
                                 {"peers_median_gbps", s.peers_median}, {"threshold", kSlowLinkThreshold}});
    }
  }
  if (!any)
    out.print("no link is below {:.0f}% of the other GPUs' median\n", 100 * kSlowLinkThreshold);
}

}  // namespace streampipe::cli
