// SPDX-License-Identifier: Apache-2.0
#pragma once
// What the host is: CPU model, cores, memory, NVIDIA driver, CUDA runtime and driver versions.
// Printed by `info` and recorded in every JSON result so a figure always names its machine.
// Describing the host never starts CUDA: a run that kept to the host would pay the driver's
// initialization for its JSON (docs/gray.md gives what that costs).

#include <nlohmann/json_fwd.hpp>

#include <string>

namespace streampipe::host {

struct HostInfo {
  std::string hostname;
  std::string cpu_model;
  unsigned cores = 0;
  double memory_gib = 0.0;
  int cuda_runtime_version = 0;  // the CUDA runtime streampipe was built with, e.g. 13000
  // The CUDA version the driver supports: 0 when no driver is installed; kNotAsked when
  // this process had not started CUDA (streampipe::cuda_started()), asking would start it.
  int cuda_driver_version = 0;
  std::string nvidia_driver;     // the kernel module's version, e.g. "580.95.05"; empty: none
  static constexpr int kNotAsked = -1;
};

[[nodiscard]] HostInfo describe_host();
// The cores this process may run on (its affinity mask: taskset, a cgroup, mpirun's
// binding), at least 1; std::thread::hardware_concurrency() counts every core of the host.
[[nodiscard]] unsigned usable_cores() noexcept;
[[nodiscard]] std::string format_cuda_version(int version);  // 13000 -> "13.0"; 0 "none"; kNotAsked "not asked"
// The version in the first line of /proc/driver/nvidia/version's text ("NVRM version: NVIDIA
// UNIX ... Kernel Module ...  580.95.05  Release Build ..."); empty when there is none.
[[nodiscard]] std::string nvidia_driver_from(const std::string& proc_version_text);
void to_json(nlohmann::json& j, const HostInfo& h);

}  // namespace streampipe::host
