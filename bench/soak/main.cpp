// SPDX-License-Identifier: Apache-2.0
// The soak test: many items through the engine with faults injected at random (soak.hpp),
// then the verdict. It fails (exit 1) when an item was not resolved in time, was resolved
// with the wrong status or output, or had its callback run other than once; when a thread
// outlived its engine; or when resident, pinned or device memory grew after warm-up by more
// than its limit per 10^5 items (the slope of a least-squares line through 50 samples).
//
// The default limits, and what they catch: 3 MiB of resident memory per 10^5 items is a
// leak of 31 bytes per item, or of 630 bytes per injected fault at the default 5% (an
// exception, its message, an item's state: each some hundreds of bytes). A flat run
// measures well under it: on a 2-core host (Debug build, host backend) +0.16 to +0.65 MiB
// over 10^5 items (seeds 1-7), the allocator's arenas settling, and +0.12 over 10^6 (38 s).
// Pinned and device memory change only in whole blocks (64 KiB steps, 2 MiB pages), so
// after warm-up any growth is a block that was not reused: 1 MiB and 2 MiB per 10^5 items.
//
//   bench/soak [--backend host|gpu] [--items N] [--failure-rate P] [--json FILE] ...
// Exit status: 0 all checks hold, 1 a check failed (or the run hung), 2 bad usage.

#include "harness/result.hpp"
#include "soak/probe.hpp"
#include "soak/soak.hpp"
#include "soak/trend.hpp"

#include "streampipe/cuda/device.hpp"
#include "streampipe/host/atomic_file.hpp"

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

namespace bench = streampipe::bench;
namespace soak = streampipe::bench::soak;
using streampipe::pipeline::Backend;

constexpr double kMiB = 1048576.0;

struct Limit {
  const char* name;
  const std::vector<soak::Sample>* samples;
  double mib_per_1e5;
};

// One row per sampled resource: its level and slope after warm-up against its limit.
bench::Row trend_row(const Limit& l, double warmup_items, bool& ok) {
  const soak::Trend t = soak::fit_trend(*l.samples, warmup_items);
  const double slope = t.slope_per_1e5 / kMiB;
  const bool within = slope <= l.mib_per_1e5;
  ok = ok && within;
  bench::Row row;
  row.name = l.name;
  row.unit = "MiB";
  for (const auto& s : *l.samples) row.values.push_back(s.value / kMiB);
  row.verified = within;
  row.cells = {l.name, fmt::format("{:.1f}", t.first / kMiB), fmt::format("{:.1f}", t.last / kMiB),
               fmt::format("{:.1f}", t.max / kMiB), fmt::format("{:+.3f}", slope), fmt::format("{:.1f}", l.mib_per_1e5),
               within ? "flat" : "GROWS"};
  nlohmann::json samples = nlohmann::json::array();
  for (const auto& s : *l.samples) samples.push_back({s.items, s.value});
  row.fields = {{"slope_mib_per_1e5_items", slope}, {"limit_mib_per_1e5_items", l.mib_per_1e5},
                {"first_mib", t.first / kMiB}, {"last_mib", t.last / kMiB}, {"max_mib", t.max / kMiB},
                {"fitted_samples", t.fitted}, {"samples_items_bytes", std::move(samples)}};
  return row;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app("Soak: many items through the engine with faults injected at random; checks that every item "
               "resolves once with the right status and output, that no thread outlives its engine, and that "
               "memory stays flat after warm-up");
  soak::SoakOptions o;
  std::string backend = "host", json_path;
  long long timeout_s = 60;
  double rss_limit = 3, pinned_limit = 1, device_limit = 2;
  app.add_option("--backend", backend, "host or gpu")->check(CLI::IsMember({"host", "gpu"}))->capture_default_str();
  app.add_option("--device", o.device, "GPU index")->check(CLI::NonNegativeNumber)->capture_default_str();
  app.add_option("--items", o.items, "items in the run (after a warm-up engine)")
      ->check(CLI::Range(std::size_t{1000}, std::size_t{1} << 40))->capture_default_str();
  app.add_option("--failure-rate", o.failure_rate, "chance that an item carries an injected fault")
      ->check(CLI::Range(0.0, 1.0))->capture_default_str();
  app.add_option("--seed", o.seed, "seed of the fault plan and the item kinds")->capture_default_str();
  app.add_option("--engines", o.engines, "successive engines the items are split over")
      ->check(CLI::Range(1, 1000))->capture_default_str();
  app.add_option("--lanes", o.lanes, "engine lanes")->check(CLI::Range(1, 64))->capture_default_str();
  app.add_option("--depth", o.depth, "slots per lane")->check(CLI::Range(1, 16))->capture_default_str();
  app.add_option("--batch", o.batch_items, "items packed per batch")->check(CLI::Range(1, 256))->capture_default_str();
  app.add_option("--max-item-bytes", o.max_item_bytes, "inputs of 4 bytes up to this")
      ->check(CLI::Range(std::size_t{4}, std::size_t{64} << 20))->capture_default_str();
  app.add_option("--samples", o.samples, "memory samples over the run")
      ->check(CLI::Range(4, 100000))->capture_default_str();
  app.add_option("--timeout-s", timeout_s, "an item or drain() taking longer is a hang")
      ->check(CLI::Range(1, 3600))->capture_default_str();
  app.add_option("--max-rss-slope-mib", rss_limit, "limit on resident memory growth, MiB per 10^5 items")
      ->capture_default_str();
  app.add_option("--max-pinned-slope-mib", pinned_limit, "limit on pinned memory growth, MiB per 10^5 items")
      ->capture_default_str();
  app.add_option("--max-device-slope-mib", device_limit, "limit on device memory growth, MiB per 10^5 items")
      ->capture_default_str();
  app.add_option("--json", json_path, "write the result (the benchmarks' JSON envelope) to FILE");
  CLI11_PARSE(app, argc, argv);
  o.backend = backend == "gpu" ? Backend::gpu : Backend::host;
  o.item_timeout = std::chrono::seconds(timeout_s);
  if (o.backend == Backend::gpu && streampipe::Device::count() == 0) {
    fmt::print(stderr, "soak: --backend gpu but no GPU is usable: {}\n",
               streampipe::Device::unavailable_reason().value_or("?"));
    return 2;
  }

  fmt::print("soak: {} backend, {} items over {} engines ({} lanes x {}, batches of {}), faults at {:.1f}%, seed {}\n",
             backend, o.items, o.engines, o.lanes, o.depth, o.batch_items, 100 * o.failure_rate, o.seed);
  std::fflush(stdout);
  soak::SoakOutcome out;
  try {
    out = soak::run_soak(o, [](const std::string& line) {
      fmt::print("{}\n", line);
      std::fflush(stdout);
    });
  } catch (const soak::SoakHang& e) {
    fmt::print(stderr, "soak: FAILED: {}\n", e.what());
    std::fflush(stdout);
    std::_Exit(1);  // the hung engine's threads hold locks: no orderly exit
  } catch (const std::exception& e) {
    fmt::print(stderr, "soak: {}\n", e.what());
    return 1;
  }

  bool ok = out.faults.total() == 0 && out.threads_after_max <= out.threads_before;
  bench::Table table;
  table.name = "memory";
  table.title = fmt::format("Memory after warm-up (the first {:.0f} items), slope of a least-squares line",
                            out.warmup_items);
  table.headers = {"resource", "first MiB", "last MiB", "max MiB", "MiB / 10^5 items", "limit", "verdict"};
  table.align.assign(table.headers.size(), streampipe::report::Align::right);
  table.align[0] = streampipe::report::Align::left;
  std::vector<Limit> limits{{"resident (RSS)", &out.rss, rss_limit}, {"pinned (pool)", &out.pinned, pinned_limit}};
  if (o.backend == Backend::gpu) limits.push_back({"device (in use)", &out.device, device_limit});
  for (const auto& l : limits) table.rows.push_back(trend_row(l, out.warmup_items, ok));

  fmt::print("items: {} resolved in {:.1f} s ({:.0f} items/s): {} done, {} failed ({} carried an injected fault)\n",
             out.submitted, out.seconds, static_cast<double>(out.submitted) / out.seconds, out.done, out.failed,
             out.injected);
  fmt::print("wrong: {} unresolved, {} wrong outputs, {} wrong statuses, {} callbacks not run once\n",
             out.faults.unresolved, out.faults.wrong_output, out.faults.wrong_status, out.faults.callbacks);
  fmt::print("threads: {} after the warm-up engine, at most {} after each later engine was destroyed\n",
             out.threads_before, out.threads_after_max);
  fmt::print("{}", bench::format_table(table));
  fmt::print("soak: {}\n", ok ? "ok" : "FAILED");

  if (!json_path.empty()) {
    bench::Result result;
    result.benchmark = "soak";
    result.device_index = o.backend == Backend::gpu ? o.device : -1;
    result.device_name = out.device_name;
    result.runs = 1;
    result.warmup = 1;
    result.parameters = {{"backend", backend}, {"items", o.items}, {"failure_rate", o.failure_rate},
                         {"seed", o.seed}, {"engines", o.engines}, {"lanes", o.lanes}, {"depth", o.depth},
                         {"batch", o.batch_items}, {"max_item_bytes", o.max_item_bytes}, {"samples", o.samples},
                         {"timeout_s", timeout_s}};
    result.limits = {{"rss_mib_per_1e5_items", rss_limit}, {"pinned_mib_per_1e5_items", pinned_limit},
                     {"device_mib_per_1e5_items", device_limit}};
    result.fields = {{"ok", ok},
                     {"seconds", out.seconds},
                     {"items", {{"resolved", out.submitted}, {"done", out.done}, {"failed", out.failed},
                                {"injected", out.injected}, {"unresolved", out.faults.unresolved},
                                {"wrong_output", out.faults.wrong_output}, {"wrong_status", out.faults.wrong_status},
                                {"callbacks_not_once", out.faults.callbacks}}},
                     {"threads", {{"before", out.threads_before}, {"after_max", out.threads_after_max}}}};
    result.tables.push_back(std::move(table));
    try {
      streampipe::host::write_file_atomically(
          json_path, bench::envelope(result, bench::command_line()).dump(2) + "\n",
          streampipe::host::Overwrite::allow);
    } catch (const std::exception& e) {
      fmt::print(stderr, "soak: {}\n", e.what());
      return 1;
    }
  }
  return ok ? 0 : 1;
}
