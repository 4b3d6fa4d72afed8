// SPDX-License-Identifier: Apache-2.0
#include "streampipe/tools/mandelbrot/report.hpp"

#include "streampipe/host/host_info.hpp"
#include "streampipe/report/json_schema.hpp"

#include <fmt/format.h>

namespace streampipe::tools::mandelbrot {

std::string report_text(const Options& o, const Summary& s) {
  const Params& p = o.params;
  const bool ranks = o.job->several();
  std::string text = fmt::format("mandelbrot {}x{}, region x [{}, {}] y [{}, {}], {} iterations, {} on {}\n", p.width,
                                 p.height, p.region.x0, p.region.x1, p.region.y0, p.region.y1, p.max_iterations,
                                 to_string(o.precision), s.where);
  text += fmt::format("  {:.2f} ms, {:.3g} pixel-iterations/s ({:.3g} pixels x max iterations / s)\n", s.compute_ms,
                      static_cast<double>(s.total_iterations) / (s.compute_ms / 1e3),
                      static_cast<double>(p.pixels()) * p.max_iterations / (s.compute_ms / 1e3));
  if (!s.bands.empty()) {
    if (ranks)
      text += fmt::format("  {} bands of rows, one per rank on its own GPU (or host); time: the slowest rank's band\n",
                          s.bands.size());
    else if (o.gpu)
      text += fmt::format("  {} bands of rows, one per GPU, all launched before any was waited for; time: the first "
                          "launch to the last band's end\n",
                          s.bands.size());
    else
      text += fmt::format("  {} bands of rows, one per simulated device, one after another on the host's threads\n",
                          s.bands.size());
    for (const auto& b : s.bands)
      text += fmt::format("    rows {}-{} ({}) on {} {}: {:.2f} ms compute{}\n", b.band.first_row,
                          b.band.first_row + b.band.rows - (b.band.rows > 0 ? 1 : 0), b.band.rows,
                          o.gpu ? "GPU" : (ranks ? "the host, rank" : "simulated device"), b.device, b.compute_ms,
                          o.gpu ? fmt::format(", {:.2f} ms copy back", b.d2h_ms) : std::string());
  }
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
                      {"backend", o.gpu ? "gpu" : "host"},
                      {"device", s.device},
                      {"devices", nlohmann::json::array()},
                      {"host", host::describe_host()},
                      {"compute_ms", s.compute_ms},
                      {"iterations_total", s.total_iterations}};
  for (const auto& [index, name] : s.gpus) j["devices"].push_back({{"index", index}, {"name", name}});
  if (o.simulated)
    for (const int d : o.devices) j["devices"].push_back({{"index", d}, {"name", "simulated"}});
  if (!s.bands.empty()) {
    j["bands"] = nlohmann::json::array();
    for (const auto& b : s.bands)
      j["bands"].push_back({{"device", b.device}, {"first_row", b.band.first_row}, {"rows", b.band.rows},
                            {"compute_ms", b.compute_ms}, {"d2h_ms", b.d2h_ms}});
  }
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
  run.name = fmt::format("mandelbrot {}x{}, {} iterations, {} on {}; query = one image", p.width, p.height,
                         p.max_iterations, to_string(o.precision), s.where);
  run.device = o.gpu ? s.device : std::string("host");
  // cudaStreamSynchronize spins under the default scheduling; the host backend computes
  // on its own threads and joins them.
  run.sync = o.gpu ? report::SyncMode::spin : report::SyncMode::blocking;
  run.limits.iteration_limit = 1;
  run.wall_ms = s.query.complete_ms - s.query.submit_ms;
  run.queries.push_back(s.query);
  return run;
}

}  // namespace streampipe::tools::mandelbrot
