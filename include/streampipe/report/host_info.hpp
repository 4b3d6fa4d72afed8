// SPDX-License-Identifier: Apache-2.0
#pragma once
// What the host is: CPU model, cores, memory, CUDA runtime and driver versions. Printed by
// `info` and recorded in every JSON result so a figure always names its machine.

#include <nlohmann/json_fwd.hpp>

#include <string>

namespace streampipe::report {

struct HostInfo {
  std::string hostname;
  std::string cpu_model;
  unsigned cores = 0;
  double memory_gib = 0.0;
  int cuda_runtime_version = 0;  // e.g. 13000
  int cuda_driver_version = 0;   // 0 when no driver is installed
};

[[nodiscard]] HostInfo describe_host();
// The cores this process may run on (its affinity mask: taskset, a cgroup, mpirun's
// binding), at least 1; std::thread::hardware_concurrency() counts every core of the host.
[[nodiscard]] unsigned usable_cores() noexcept;
[[nodiscard]] std::string format_cuda_version(int version);  // 13000 -> "13.0"
void to_json(nlohmann::json& j, const HostInfo& h);

}  // namespace streampipe::report
