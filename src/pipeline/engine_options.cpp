// SPDX-License-Identifier: Apache-2.0
#include "engine_options.hpp"

#include "streampipe/cuda/device.hpp"
#include "streampipe/report/host_info.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>
#include <thread>

namespace streampipe::pipeline {

const char* backend_name(Backend b) noexcept {
  switch (b) {
    case Backend::gpu: return "gpu";
    case Backend::host: return "host";
    case Backend::automatic: break;
  }
  return "automatic";
}

namespace detail {

EngineOptions checked_options(EngineOptions options) {
  // Each lane is a stream (or a thread) with a completion thread, each slot holds memory:
  // beyond these an engine cannot start (threads, memory), it only takes the process down.
  const auto within = [](const char* name, long long value, long long low, long long high) {
    if (value < low || value > high)
      throw std::invalid_argument(fmt::format("EngineOptions::{} {} is not in {}-{}", name, value, low, high));
  };
  within("lanes", options.lanes, 1, kMaxLanes);
  within("depth", options.depth, 1, kMaxDepth);
  within("batch_items", options.batch_items, 1, kMaxBatchItems);
  within("host_threads", options.host_threads, 0, kMaxHostThreads);
  within("devices (how many)", static_cast<long long>(options.devices.size()), 0, kMaxDevices);
  // Graph replay needs a slot's staging at the same address every time: one block per slot.
  if (options.use_graphs) options.staging_bytes = 0;
  return options;
}

Backend resolve_backend(const EngineOptions& options, const Operation& op) {
  Backend backend = options.backend;
  if (backend == Backend::automatic) backend = Device::count() > 0 ? Backend::gpu : Backend::host;
  if (backend == Backend::gpu && !op.device)
    throw std::invalid_argument(fmt::format("operation '{}' has no device form", op.name));
  if (backend == Backend::host && !op.host)
    throw std::invalid_argument(fmt::format("operation '{}' has no host form", op.name));
  return backend;
}

std::vector<int> resolve_devices(const EngineOptions& options, Backend backend) {
  for (const int d : options.devices)
    if (d < 0) throw std::invalid_argument(fmt::format("EngineOptions::devices: {} is not a device index", d));
  if (backend == Backend::host) return options.devices.empty() ? std::vector<int>{0} : options.devices;
  const int count = Device::count();
  std::vector<int> devices = options.devices;
  if (devices.empty())
    for (int d = 0; d < count; ++d) devices.push_back(d);
  for (const int d : devices)
    if (d >= count) throw std::out_of_range(fmt::format("EngineOptions::devices: GPU {} does not exist ({} GPU(s))", d, count));
  if (devices.empty()) throw std::out_of_range("EngineOptions::devices: no usable GPU");
  return devices;
}

int host_worker_count(const EngineOptions& options) noexcept {
  if (options.host_threads > 0) return options.host_threads;
  return static_cast<int>(std::clamp(report::usable_cores(), 2u, 32u));
}

std::string describe_engine(const EngineOptions& o, Backend backend, const std::vector<int>& devices,
                            int host_workers) {
  std::string where;
  if (backend == Backend::gpu) {
    for (const int d : devices)
      where += fmt::format("{}{} ({})", where.empty() ? (devices.size() > 1 ? "GPUs " : "GPU ") : ", ", d,
                           Device(d).name());
  } else {
    where = "host backend (threads + memcpy)";
    if (devices.size() > 1) where += fmt::format(", {} simulated devices", devices.size());
  }
  const std::string staging = o.staging_bytes == 0 ? std::string("staging: a block per slot")
                                                   : fmt::format("staging up to {} MiB", o.staging_bytes >> 20);
  return fmt::format("{}: {} lanes{} x depth {}, batch up to {} items / {} MiB, {} host workers, {}, {}{}", where,
                     o.lanes, devices.size() > 1 ? " per device" : "", o.depth, o.batch_items, o.batch_bytes >> 20, host_workers, staging,
                     o.delivery == Delivery::in_order ? "in-order delivery" : "as-completed delivery",
                     o.use_graphs ? ", graph replay" : "");
}

}  // namespace detail
}  // namespace streampipe::pipeline
