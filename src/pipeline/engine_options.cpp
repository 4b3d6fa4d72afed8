// SPDX-License-Identifier: Apache-2.0
#include "engine_options.hpp"

#include "streampipe/cuda/device.hpp"
#include "streampipe/host/host_info.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

namespace streampipe::pipeline {

void request_lane_queues(const EngineOptions& options) noexcept {
  if (options.backend == Backend::host || options.simulate_gpus) return;
  request_hardware_queues(options.lanes);
}

}  // namespace streampipe::pipeline

namespace streampipe::pipeline::detail {

EngineOptions checked_options(EngineOptions options) {
  // Each lane is a stream (or a thread) with a completion thread, each slot holds memory:
  // beyond these an engine cannot start (threads, memory), it only takes the process down.
  const auto within = [](const char* name, long long value, long long low, long long high) {
    if (value < low || value > high)
      throw std::invalid_argument(fmt::format("EngineOptions::{} {} is not in {}-{}", name, value, low, high));
  };
  within("lanes", options.lanes, 1, kMaxLanes);
  within("cpu_lanes", options.cpu_lanes, 0, kMaxLanes);
  within("depth", options.depth, 1, kMaxDepth);
  within("batch_items", options.batch_items, 1, kMaxBatchItems);
  within("host_threads", options.host_threads, 0, kMaxHostThreads);
  within("devices (how many)", static_cast<long long>(options.devices.size()), 0, kMaxDevices);
  if (options.gpu_start_ms < 0) throw std::invalid_argument("EngineOptions::gpu_start_ms must not be negative");
  if (options.gpu_stop_ms < 0) throw std::invalid_argument("EngineOptions::gpu_stop_ms must not be negative");
  // Graph replay needs a slot's staging at the same address every time: one block per slot.
  if (options.use_graphs) options.staging_bytes = 0;
  return options;
}

int host_worker_count(const EngineOptions& options) noexcept {
  if (options.host_threads > 0) return options.host_threads;
  return static_cast<int>(std::clamp(host::usable_cores(), 2u, 32u));
}

std::string describe_engine(const EngineOptions& o, const std::vector<DeviceReport>& members, int host_workers) {
  std::string where;
  for (const DeviceReport& m : members) {
    std::string name = m.name;
    if (m.device != kCpuDevice && !m.simulated && m.state == DeviceReport::State::ready)
      name += fmt::format(" ({})", Device(m.device).name());
    if (m.state != DeviceReport::State::ready) name += fmt::format(" [{}]", device_state_name(m.state));
    where += fmt::format("{}{}: {} lanes", where.empty() ? "" : "; ", name, m.lanes);
  }
  if (where.empty()) where = "GPUs being found";
  const std::string staging = o.staging_bytes == 0 ? std::string("staging: a block per slot")
                                                   : fmt::format("staging up to {} MiB", o.staging_bytes >> 20);
  return fmt::format("{}; depth {}, batch up to {} items / {} MiB, {} host workers, {}, {}{}", where, o.depth,
                     o.batch_items, o.batch_bytes >> 20, host_workers, staging,
                     o.delivery == Delivery::in_order ? "in-order delivery" : "as-completed delivery",
                     o.use_graphs ? ", graph replay" : "");
}

}  // namespace streampipe::pipeline::detail
