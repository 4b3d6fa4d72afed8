// SPDX-License-Identifier: Apache-2.0
// `bench streams`: the classic stream experiments (experiments.hpp) run one after another,
// each printed as a table when it is done: the median time of the runs with min and max, the
// rate of the bytes moved against the physical limit measured now, and the speed-up over the
// experiment's first row (its naive peer on a GPU).

#include "benchmarks.hpp"
#include "streams/experiments.hpp"

#include <fmt/format.h>

namespace streampipe::bench {
namespace {

using streams::Config;
using streams::Experiment;

Table to_table(Experiment ex) {
  const bool overhead = ex.name == "overhead";
  Table t;
  t.name = ex.name;
  // A limit is a GPU's link, measured now: rows without one (the host's) are held to none.
  bool limited = false;
  for (const auto& r : ex.rows) limited = limited || r.fields.value("limit_gbps", 0.0) > 0;
  const std::string limit = limited ? ex.limit_name : std::string();
  t.title = fmt::format("{}{}", ex.title, limit.empty() ? "" : fmt::format(" (limit: {})", limit));
  // "ms" is the median of the row's own timed runs: rows too slow to repeat run fewer.
  t.headers = overhead ? std::vector<std::string>{"variant", "ms", "min", "max", "runs", "us/item", "verified"}
                       : std::vector<std::string>{"variant", "ms", "min", "max", "runs", "GB/s", "% of limit", "speedup",
                                                  "verified"};
  t.fields["limit"] = limit.empty() ? nlohmann::json(nullptr) : nlohmann::json(limit);
  const double baseline = ex.rows.empty() ? 0 : ex.rows.front().summary().median;
  for (auto& r : ex.rows) {
    const auto s = r.summary();
    const double bytes = r.fields.value("bytes", 0.0), limit_gbps = r.fields.value("limit_gbps", 0.0);
    const double gbps = s.median > 0 ? bytes / (s.median * 1e6) : 0;
    const double pct = limit_gbps > 0 ? 100 * gbps / limit_gbps : 0;
    const std::string detail = r.fields.value("detail", std::string());
    r.fields["detail"] = detail;
    r.fields["limit_gbps"] = limit_gbps;
    r.fields["gbps"] = gbps;
    r.fields["percent_of_limit"] = pct;
    r.fields["speedup_vs_first"] = baseline > 0 ? baseline / s.median : 0;
    const std::string ok = r.verified ? "yes" : "NO";
    if (overhead) {
      const double per_item_us = 1000 * s.median / r.fields["items"].get<double>();
      r.fields["us_per_item"] = per_item_us;
      r.cells = {r.name, fmt::format("{:.2f}", s.median), fmt::format("{:.2f}", s.min), fmt::format("{:.2f}", s.max),
                 std::to_string(s.count), fmt::format("{:.2f}", per_item_us), ok};
    } else {
      r.cells = {r.name, fmt::format("{:.2f}", s.median), fmt::format("{:.2f}", s.min), fmt::format("{:.2f}", s.max),
                 std::to_string(s.count), fmt::format("{:.1f}", gbps), limit_gbps > 0 ? fmt::format("{:.0f}%", pct) : "-",
                 fmt::format("{:.1f}x", baseline / s.median), ok};
    }
    if (!detail.empty()) t.notes.push_back(fmt::format("  {}: {}", r.name, detail));
    t.rows.push_back(std::move(r));
  }
  return t;
}

void run_streams(State& state) {
  Config c;
  c.device = state.device();
  c.devices = state.devices();
  c.runs = state.runs();
  c.warmup = state.warmup();
  c.images = state.get<int>("images");
  c.arrays = state.get<int>("arrays");
  c.chunked_mib = state.get<std::size_t>("chunked-mib");
  c.overhead_items = state.get<int>("overhead-items");
  c.lanes = state.get<int>("lanes");
  c.batch = state.get<int>("batch");
  c.depth = state.get<int>("depth");
  c.host_threads = state.get<int>("host-threads");
  c.staging_mib = state.get<int>("staging-mib");
  c.trace_dir = state.get<std::string>("trace-dir");
  c.force = state.force();
  const auto which = state.get<std::string>("experiment");

  const bool gpu = Device::count() > 0;
  const LinkLimits* link = nullptr;
  if (gpu) {
    const Device dev(c.device);
    link = &link_limits(dev);
    state.set_device(dev.index(), dev.name());
    state.result().limits = {{"pinned_h2d_gbps", link->peak_gbps("pinned_h2d")},
                             {"pinned_d2h_gbps", link->peak_gbps("pinned_d2h")},
                             {"bidirectional_gbps", link->peak_gbps("bidirectional")}};
    state.print(fmt::format("device: {}; link measured now (best of 7 runs of 256 MiB): H2D {:.1f} GB/s, D2H {:.1f} "
                            "GB/s, both {:.1f} GB/s\n",
                            dev.name(), link->peak_gbps("pinned_h2d"), link->peak_gbps("pinned_d2h"),
                            link->peak_gbps("bidirectional")));
  } else {
    state.print("no GPU: engine rows run on the host backend; the GPU-only peers are skipped\n");
  }
  const auto add = [&](Experiment ex) {
    state.print("\n");
    state.add_table(to_table(std::move(ex)));
  };
  const auto want = [&](const char* name) { return which == "all" || which == name; };
  if (want("gray")) add(streams::gray_experiment(c, gpu, link));
  if (want("arrays")) add(streams::arrays_experiment(c, gpu, link));
  if (want("user-kernel") && gpu) add(streams::user_kernel_experiment(c, gpu, link));
  if (want("chunked")) add(streams::chunked_experiment(c, gpu, link));
  if (want("overhead")) add(streams::overhead_experiment(c, gpu));
}

}  // namespace

Benchmark streams_benchmark() {
  Benchmark b;
  b.name = "streams";
  b.description =
      "The classic CUDA-streams experiments side by side (a loop, a stream per item, the engine) on images, many "
      "small arrays, a user's own kernel and one large array; every output verified. See docs/engine.md.";
  b.mismatch = "some outputs did not match their CPU reference";
  using I = std::int64_t;
  b.parameters = {
      {"experiment", "which experiment to run", std::string("all"), 0, 0, {"all", "gray", "arrays", "user-kernel", "chunked", "overhead"}},
      {"images", "images in the gray experiment", I{64}, 1, 4096},
      {"arrays", "arrays in the arrays experiment", I{200}, 1, 4096},
      {"chunked-mib", "size of the chunked array in MiB", I{1024}, 16, 65536},
      {"overhead-items", "tiny items in the overhead experiment", I{20000}, 1, 10000000},
      {"lanes", "engine lanes for every experiment (default: each chooses)", I{0}, 1, 128, {}, false},
      {"batch", "arrays per launch in the arrays experiment", I{0}, 1, 4096, {}, false},
      {"depth", "slots per engine lane (work in flight) in the gray and arrays experiments", I{0}, 1, 16, {}, false},
      {"host-threads", "engine staging workers in the gray and arrays experiments (default: one per core)", I{0}, 1, 64,
       {}, false},
      {"staging-mib",
       "pinned staging the engine lends at once for pageable input in the gray and arrays experiments "
       "(default: the engine's 48; 0: a block per slot, held until the slot completes)",
       I{-1}, 0, 65536, {}, false},
      {"trace-dir", "write Chrome traces and SVG Gantt charts of the engine runs here", std::string(), 0, 0, {}, false},
  };
  b.files = [](const Values& values) {
    std::vector<File> files;
    for (auto& path : streams::trace_files(std::get<std::string>(values.at("trace-dir")),
                                           std::get<std::string>(values.at("experiment"))))
      files.push_back({"--trace-dir", std::move(path)});
    return files;
  };
  b.run = run_streams;
  return b;
}

}  // namespace streampipe::bench
