// SPDX-License-Identifier: Apache-2.0
#include "streampipe/tools/mandelbrot/report.hpp"

#include "bands_json.hpp"

#include "streampipe/host/host_info.hpp"
#include "streampipe/report/json_schema.hpp"

#include <fmt/format.h>

namespace streampipe::tools::mandelbrot {
namespace {

// Which kinds of device computed bands: "host", "gpu" or "host+gpu" (simulated GPUs are the
// host's threads).
std::string backend_of(const Summary& s) {
  bool host = false;
  for (const auto& d : s.devices)
    if (d.bands > 0 && (d.device < 0 || d.simulated)) host = true;
  return s.gpu_ran ? (host ? "host+gpu" : "gpu") : "host";
}

std::string share_line(const DeviceShare& d, bool ranks) {
  std::string line = fmt::format("    {}{}: {} band{}, {} row{}", ranks ? fmt::format("rank {}, ", d.rank) : "", d.name,
                                 d.bands, d.bands == 1 ? "" : "s", d.rows, d.rows == 1 ? "" : "s");
  if (d.state != "ready") line += fmt::format(" ({}{}{})", d.state, d.reason.empty() ? "" : ": ", d.reason);
  return line + "\n";
}

}  // namespace

std::string report_text(const Options& o, const Summary& s) {
  const Params& p = o.params;
  const bool ranks = o.job->several();
  std::string text = fmt::format("mandelbrot {}x{}, region x [{}, {}] y [{}, {}], {} iterations, {} on {}\n", p.width,
                                 p.height, p.region.x0, p.region.x1, p.region.y0, p.region.y1, p.max_iterations,
                                 to_string(o.precision), s.where);
  text += fmt::format("  {:.2f} ms, {:.3g} pixel-iterations/s ({:.3g} pixels x max iterations / s)\n", s.compute_ms,
                      static_cast<double>(s.total_iterations) / (s.compute_ms / 1e3),
                      static_cast<double>(p.pixels()) * p.max_iterations / (s.compute_ms / 1e3));
  if (ranks)
    text += fmt::format("  {} bands of rows over {} ranks, each rank's dealt by its own engine; time: the slowest "
                        "rank's, its first band's start to its last band's end\n",
                        s.bands.size(), o.job->info().size);
  else
    text += fmt::format("  {} bands of rows, each dealt by the engine to the device expected to finish it first; "
                        "time: the first band's start to the last band's end ({:.2f} ms from the first band's "
                        "submission to the last band's delivery)\n",
                        s.bands.size(), s.query.complete_ms - s.query.submit_ms);
  for (const auto& d : s.devices) text += share_line(d, ranks);
  if (const auto& c = s.comparison)
    text += fmt::format("  against the host double reference: {} pixel(s) differ ({:.4f}%), {} of them on escape "
                        "boundaries, largest difference {} iterations\n",
                        c->differing, 100.0 * static_cast<double>(c->differing) / static_cast<double>(p.pixels()),
                        c->differing_boundary, c->max_difference);
  return text;
}

nlohmann::json report_json(const Options& o, const Summary& s) {
  const Params& p = o.params;
  nlohmann::json j = {{"tool", "mandelbrot"},
                      {"width", p.width},
                      {"height", p.height},
                      {"region", {p.region.x0, p.region.x1, p.region.y0, p.region.y1}},
                      {"iterations", p.max_iterations},
                      {"precision", to_string(o.precision)},
                      {"backend", backend_of(s)},
                      {"device", s.device},
                      {"devices", s.devices},
                      {"engine", s.engine},
                      {"host", host::describe_host()},
                      {"compute_ms", s.compute_ms},
                      {"iterations_total", s.total_iterations},
                      {"bands", s.bands}};
  if (!o.job->several()) j["wall_ms"] = s.query.complete_ms - s.query.submit_ms;
  if (const auto& c = s.comparison) {
    j["differing_pixels"] = c->differing;
    j["differing_boundary_pixels"] = c->differing_boundary;
    j["max_difference"] = c->max_difference;
  }
  return report::stamped(std::move(j), "mandelbrot");
}

report::LatencyRun latency_run(const Options& o, const Summary& s) {
  const Params& p = o.params;
  report::LatencyRun run;
  run.name = fmt::format("mandelbrot {}x{}, {} iterations, {} on {}; query = one image ({} bands)", p.width, p.height,
                         p.max_iterations, to_string(o.precision), s.where, s.bands.size());
  run.device = s.gpu_ran ? s.device : std::string("host");
  // The GPU lanes wait on events created without cudaEventBlockingSync; the CPU's lane
  // waits on a condition variable.
  run.sync = s.gpu_ran ? report::SyncMode::spin : report::SyncMode::blocking;
  run.limits.iteration_limit = 1;
  run.wall_ms = s.query.complete_ms - s.query.submit_ms;
  run.queries.push_back(s.query);
  return run;
}

}  // namespace streampipe::tools::mandelbrot
