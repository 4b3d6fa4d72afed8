// SPDX-License-Identifier: Apache-2.0
#include "streampipe/pipeline/device_set.hpp"

#include "streampipe/cuda/device.hpp"

#include <fmt/format.h>

#include <stdexcept>

namespace streampipe::pipeline {

const char* backend_name(Backend b) noexcept {
  switch (b) {
    case Backend::gpu: return "gpu";
    case Backend::host: return "host";
    case Backend::automatic: break;
  }
  return "auto";
}

Backend parse_backend(std::string_view name) {
  if (name == "auto") return Backend::automatic;
  if (name == "gpu") return Backend::gpu;
  if (name == "host") return Backend::host;
  throw std::invalid_argument(fmt::format("backend '{}' is not one of auto, gpu, host", name));
}

const char* device_state_name(DeviceReport::State s) noexcept {
  switch (s) {
    case DeviceReport::State::starting: return "starting";
    case DeviceReport::State::ready: return "ready";
    case DeviceReport::State::failed: return "failed";
    case DeviceReport::State::lost: return "lost";
    case DeviceReport::State::not_started: return "not started";
  }
  return "unknown";
}

namespace {

// The GPUs `devices` names (every usable one when empty), checked against the machine.
std::vector<int> named_gpus(const std::vector<int>& devices) {
  const int count = Device::count();
  std::vector<int> gpus = devices;
  if (gpus.empty())
    for (int d = 0; d < count; ++d) gpus.push_back(d);
  for (const int d : gpus)
    if (d >= count) throw std::out_of_range(fmt::format("GPU {} does not exist ({} GPU(s))", d, count));
  if (gpus.empty())
    throw std::out_of_range(fmt::format("no usable GPU: {}", Device::unavailable_reason().value_or("none found")));
  return gpus;
}

}  // namespace

DeviceSet DeviceSet::resolve(Backend backend, const std::vector<int>& devices, bool simulate_gpus, bool has_host_form,
                             bool has_device_form) {
  for (const int d : devices)
    if (d < 0) throw std::invalid_argument(fmt::format("devices: {} is not a device index", d));
  DeviceSet set;
  set.simulated = simulate_gpus;
  // Simulated GPUs run the host form: the form a GPU member needs is then the host one.
  const bool gpu_form = simulate_gpus ? has_host_form : has_device_form;
  const auto gpus = [&] {
    if (simulate_gpus) return devices.empty() ? std::vector<int>{0} : devices;
    return named_gpus(devices);
  };
  switch (backend) {
    case Backend::host:
      if (!devices.empty())
        throw std::invalid_argument("the host backend has no devices (simulated GPUs: backend gpu with simulate_gpus)");
      if (!has_host_form) throw std::invalid_argument("the operation has no host form, so the host backend cannot run it");
      set.cpu = true;
      return set;
    case Backend::gpu:
      if (!gpu_form) throw std::invalid_argument("the operation has no device form, so it cannot run on a GPU");
      set.gpus = gpus();
      return set;
    case Backend::automatic:
      if (!has_host_form && !gpu_form) throw std::invalid_argument("the operation has neither a host nor a device form");
      set.cpu = has_host_form;
      if (!gpu_form) return set;
      // With the CPU to work meanwhile, every GPU is found as the engine starts.
      if (set.cpu && devices.empty() && !simulate_gpus) {
        set.find_gpus = true;
        return set;
      }
      set.gpus = gpus();
      return set;
  }
  return set;
}

DeviceSet DeviceSet::unmixed() const {
  DeviceSet out = *this;
  if (out.find_gpus) {
    const int count = Device::count();
    for (int d = 0; d < count; ++d) out.gpus.push_back(d);
    out.find_gpus = false;
  }
  if (out.cpu && !out.gpus.empty()) out.cpu = false;
  return out;
}

}  // namespace streampipe::pipeline
