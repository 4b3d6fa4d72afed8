// SPDX-License-Identifier: Apache-2.0
#include "streampipe/host/host_info.hpp"

#include "streampipe/cuda/device.hpp"

#include <cuda_runtime_api.h>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <sched.h>

#include <algorithm>
#include <cctype>
#include <fstream>
#include <sstream>
#include <thread>
#include <unistd.h>

namespace streampipe::host {

unsigned usable_cores() noexcept {
  cpu_set_t mask;
  CPU_ZERO(&mask);
  if (sched_getaffinity(0, sizeof(mask), &mask) == 0 && CPU_COUNT(&mask) > 0) return static_cast<unsigned>(CPU_COUNT(&mask));
  return std::max(1u, std::thread::hardware_concurrency());
}

HostInfo describe_host() {
  HostInfo h;
  char name[256] = {};
  if (::gethostname(name, sizeof(name) - 1) == 0) h.hostname = name;
  std::ifstream cpu("/proc/cpuinfo");
  for (std::string line; std::getline(cpu, line);) {
    if (line.rfind("model name", 0) == 0) {
      const auto colon = line.find(':');
      if (colon != std::string::npos) h.cpu_model = line.substr(colon + 2);
      break;
    }
  }
  h.cores = std::thread::hardware_concurrency();
  std::ifstream mem("/proc/meminfo");
  std::string key;
  double kib = 0;
  if (mem >> key >> kib && key == "MemTotal:") h.memory_gib = kib / (1024.0 * 1024.0);
  std::ifstream module("/proc/driver/nvidia/version");
  std::string first_line;
  if (module) std::getline(module, first_line);
  h.nvidia_driver = nvidia_driver_from(first_line);
  h.cuda_runtime_version = CUDART_VERSION;  // what streampipe was built with; asking would start CUDA
  h.cuda_driver_version = HostInfo::kNotAsked;
  if (cuda_started() && cudaDriverGetVersion(&h.cuda_driver_version) != cudaSuccess) h.cuda_driver_version = 0;
  return h;
}

std::string nvidia_driver_from(const std::string& text) {
  std::istringstream words(text.substr(0, text.find('\n')));
  for (std::string w; words >> w;) {
    const bool version = !w.empty() && std::isdigit(static_cast<unsigned char>(w.front())) &&
                         std::isdigit(static_cast<unsigned char>(w.back())) && w.find('.') != std::string::npos &&
                         w.find_first_not_of("0123456789.") == std::string::npos;
    if (version) return w;
  }
  return {};
}

std::string format_cuda_version(int version) {
  if (version == HostInfo::kNotAsked) return "not asked";
  if (version <= 0) return "none";
  return fmt::format("{}.{}", version / 1000, (version % 1000) / 10);
}

void to_json(nlohmann::json& j, const HostInfo& h) {
  j = nlohmann::json{{"hostname", h.hostname},
                     {"cpu_model", h.cpu_model},
                     {"cores", h.cores},
                     {"memory_gib", h.memory_gib},
                     {"cuda_runtime", format_cuda_version(h.cuda_runtime_version)},
                     {"cuda_driver", format_cuda_version(h.cuda_driver_version)},
                     {"nvidia_driver", h.nvidia_driver.empty() ? std::string("none") : h.nvidia_driver}};
}

}  // namespace streampipe::host
