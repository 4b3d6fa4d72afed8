// SPDX-License-Identifier: Apache-2.0
// A Mandelbrot run (see tools/mandelbrot/run.hpp): the image's bands dealt by the engine, on
// one process or on the ranks, then checked against the host's double reference.

#include "streampipe/tools/mandelbrot/run.hpp"

#include "gather.hpp"
#include "part.hpp"

#include "streampipe/host/host_info.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

namespace streampipe::tools::mandelbrot {

pipeline::EngineOptions tool_engine_defaults() {
  pipeline::EngineOptions o;
  o.lanes = 4;
  // The CPU is one lane whose band takes every core, a row at a time to whichever is free,
  // rather than a lane per core with a band each: a band then ends as soon as the whole CPU
  // can end it, so beside GPUs that are far faster the CPU holds a band for a short time
  // and the end of the run never waits long for it, and rows inside the set (the costly
  // ones) are spread over the cores within each band.
  o.cpu_lanes = 1;
  o.depth = 2;
  return o;
}

BandsRun compute_part(const Options& o, RowBand part) {
  const int cpu_lanes = o.engine.cpu_lanes > 0 ? o.engine.cpu_lanes : o.engine.lanes;
  const unsigned threads = std::max(1u, host::usable_cores() / static_cast<unsigned>(std::max(1, cpu_lanes)));
  return compute_bands(band_operation(o.params, o.precision, threads), o.engine, o.params, part);
}

std::string where_of(const std::vector<DeviceShare>& devices, const std::string& cpu) {
  std::vector<std::string> names;
  std::size_t simulated = 0;
  for (const auto& d : devices) {
    if (d.bands == 0) continue;
    if (d.device == pipeline::kCpuDevice)
      names.push_back(cpu);
    else if (d.simulated)
      ++simulated;
    else
      names.push_back(d.name);
  }
  if (simulated > 0) names.push_back(fmt::format("{} simulated GPU{}", simulated, simulated == 1 ? "" : "s"));
  if (names.empty()) return "nowhere";
  if (names.size() == 1) return names.front();
  const std::string last = names.back();
  names.pop_back();
  return fmt::format("{} and {}", fmt::join(names, ", "), last);
}

Summary run(const Options& o) {
  const mpi::Job& job = *o.job;
  Summary s;
  if (job.several()) {
    std::optional<RankedImage> ranked = compute_ranked(o);
    s.reports = ranked.has_value();
    if (!ranked) return s;  // its bands went to rank 0, which checks and reports
    s.counts = std::move(ranked->counts);
    s.compute_ms = ranked->compute_ms;
    s.where = ranked->where;
    s.bands = std::move(ranked->bands);
    s.devices = std::move(ranked->devices);
    s.engine = std::move(ranked->engine);
  } else {
    BandsRun part = compute_part(o, RowBand{0, o.params.height});
    s.counts = std::move(part.counts);
    s.compute_ms = part.compute_ms;
    s.query = part.query;
    s.bands = std::move(part.bands);
    s.devices = std::move(part.devices);
    s.engine = std::move(part.engine);
    s.where = where_of(s.devices);
  }
  for (const auto& d : s.devices)
    if (d.bands > 0 && d.device >= 0 && !d.simulated) {
      s.gpu_ran = true;
      s.device += (s.device.empty() ? "" : ", ") + d.name;
    }
  if (s.device.empty()) s.device = "none";
  for (const auto c : s.counts) s.total_iterations += c;
  if (o.verify) {
    // The reference is the host's double result. Bands the CPU alone computed in double are
    // that result already (the same code on the same rows), so it is not computed twice.
    const bool cpu_alone = std::all_of(s.devices.begin(), s.devices.end(), [](const DeviceShare& d) {
      return d.bands == 0 || d.device == pipeline::kCpuDevice;
    });
    const bool is_reference = cpu_alone && o.precision == Precision::double_;
    const auto reference = is_reference ? s.counts : compute_host(o.params, Precision::double_);
    s.comparison = compare(reference, s.counts, o.params.width, o.params.height);
  }
  return s;
}

}  // namespace streampipe::tools::mandelbrot
