// SPDX-License-Identifier: Apache-2.0
// A Mandelbrot run (see tools/mandelbrot/run.hpp): the image on the ranks, the GPUs or the
// host, its one query timed, then checked against the host's double reference.

#include "streampipe/tools/mandelbrot/run.hpp"

#include "gather.hpp"

#include "streampipe/cuda/device.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <chrono>
#include <numeric>

namespace streampipe::tools::mandelbrot {

Summary run(const Options& o) {
  using Clock = std::chrono::steady_clock;
  const mpi::Job& job = *o.job;
  Summary s;
  s.where = "host backend";
  const auto t_submit = Clock::now();
  const double submit_epoch_ms = std::chrono::duration<double, std::milli>(t_submit.time_since_epoch()).count();
  std::vector<Device> gpus;
  for (const int index : o.gpu ? o.devices : std::vector<int>{}) gpus.emplace_back(index);
  std::vector<std::string> gpu_names;
  for (const auto& gpu : gpus) {
    gpu_names.push_back(fmt::format("{} ({})", gpu.index(), gpu.name()));
    s.gpus.emplace_back(gpu.index(), gpu.name());
    s.device += (s.device.empty() ? "" : ", ") + gpu.name();
  }
  if (!o.gpu) s.device = "none";
  if (job.several()) {
    std::optional<RankedImage> ranked = compute_ranked(o);
    s.reports = ranked.has_value();
    if (!ranked) return s;  // its band went to rank 0, which checks and reports
    s.counts = std::move(ranked->run.counts);
    s.compute_ms = ranked->run.compute_ms;
    s.where = ranked->where;
    s.bands = std::move(ranked->run.bands);
  } else if (o.gpu || o.simulated) {
    // Stream and buffer creation are setup, not part of the query.
    SpreadRun run = o.gpu ? compute_spread(gpus, o.params, o.precision)
                          : compute_spread_host(o.devices, o.params, o.precision);
    if (o.gpu)
      s.where = gpus.size() == 1 ? "GPU " + gpu_names[0]
                                 : fmt::format("{} GPUs: {}", gpus.size(), fmt::join(gpu_names, ", "));
    else
      s.where = fmt::format("host backend, {} simulated device(s)", o.devices.size());
    s.counts = std::move(run.counts);
    s.compute_ms = run.compute_ms;
    s.query.submit_ms = s.query.enqueue_begin_ms = run.enqueue_begin_ms - submit_epoch_ms;
    s.query.enqueue_end_ms = run.enqueue_end_ms - submit_epoch_ms;
    s.query.complete_ms = run.complete_ms - submit_epoch_ms;
    s.query.compute_ms = s.compute_ms;
    s.query.d2h_ms = std::accumulate(run.bands.begin(), run.bands.end(), 0.0,
                                     [](double m, const BandRun& b) { return std::max(m, b.d2h_ms); });
    if (run.bands.size() > 1 || o.simulated) s.bands = std::move(run.bands);
  } else {
    const auto t0 = Clock::now();
    s.counts = compute_host(o.params, o.precision);
    s.compute_ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
    s.query.enqueue_begin_ms = s.query.enqueue_end_ms = 0;
    s.query.complete_ms = std::chrono::duration<double, std::milli>(Clock::now() - t_submit).count();
  }
  for (const auto c : s.counts) s.total_iterations += c;
  if (o.verify) {
    // The host's own whole-image double result is the reference; bands (simulated devices)
    // are checked against it like a GPU's.
    const bool is_reference = !o.gpu && !o.simulated && o.precision == Precision::double_;
    const auto reference = is_reference ? s.counts : compute_host(o.params, Precision::double_);
    s.comparison = compare(reference, s.counts, o.params.width, o.params.height);
  }
  return s;
}

}  // namespace streampipe::tools::mandelbrot
