// SPDX-License-Identifier: Apache-2.0
#include "engine_options.hpp"

#include "commands.hpp"
#include "devices_option.hpp"
#include "option_checks.hpp"
#include "ranks.hpp"

#include "streampipe/cuda/device.hpp"
#include "streampipe/mpi/ranks.hpp"

#include <fmt/format.h>

namespace streampipe::cli {

void add_engine_options(CLI::App& app, EngineFlags& flags, const pipeline::EngineOptions& defaults,
                        const std::string& spread) {
  app.add_option("--backend", flags.backend,
                 "where the work runs: auto (the CPU and every GPU, each in proportion to its speed), gpu (the "
                 "GPUs alone) or host (the CPU alone)")
      ->capture_default_str()
      ->type_name("WHERE");
  add_devices_option(app, flags.devices, spread + "; with --backend host, simulated GPUs (tests without a GPU)");
  const auto shown = [](int value) { return value > 0 ? std::to_string(value) : std::string("chosen"); };
  app.add_option("--lanes", flags.lanes, fmt::format("streams per GPU (default {})", shown(defaults.lanes)))
      ->transform(whole_number(0, 64));
  app.add_option("--cpu-lanes", flags.cpu_lanes,
                 fmt::format("the CPU's lanes (default {})", shown(defaults.cpu_lanes > 0 ? defaults.cpu_lanes : 0)))
      ->transform(whole_number(0, 64));
  app.add_option("--threads", flags.threads, "host worker threads (default: one per core)")
      ->transform(whole_number(0, 1024));
  app.add_option("--depth", flags.depth, fmt::format("batches in flight per lane (default {})", shown(defaults.depth)))
      ->transform(whole_number(0, 64));
}

pipeline::EngineOptions engine_options(const EngineFlags& flags, pipeline::EngineOptions base) {
  try {
    base.backend = pipeline::parse_backend(flags.backend);
  } catch (const std::invalid_argument&) {
    throw UsageError(fmt::format("--backend '{}' is not one of auto, gpu, host", flags.backend));
  }
  if (flags.lanes > 0) base.lanes = flags.lanes;
  if (flags.cpu_lanes > 0) base.cpu_lanes = flags.cpu_lanes;
  if (flags.threads > 0) base.host_threads = flags.threads;
  if (flags.depth > 0) base.depth = flags.depth;
  base.devices.clear();
  base.simulate_gpus = false;
  if (base.backend == pipeline::Backend::host) {
    if (auto simulated = parse_device_list(flags.devices)) {
      base.backend = pipeline::Backend::gpu;
      base.simulate_gpus = true;
      base.devices = std::move(*simulated);
    }
    return base;
  }
  (void)parse_device_list(flags.devices);  // a malformed list is named before the machine is asked
  pipeline::request_lane_queues(base);       // before the GPUs are counted: the driver reads it once
  const mpi::Job& ranks = Ranks::get();
  if (base.backend == pipeline::Backend::gpu && Device::count() == 0)
    throw UsageError(fmt::format("--backend gpu: no usable GPU ({})", Device::unavailable_reason().value_or("?")));
  // A named list, and one rank's GPU under mpirun, are checked now; "all" is found by the
  // engine while the CPU works.
  if (flags.devices != "all" || ranks.several() || base.backend == pipeline::Backend::gpu) {
    base.devices = ranks.local_devices(select_gpus(flags.devices));
  }
  return base;
}

}  // namespace streampipe::cli
