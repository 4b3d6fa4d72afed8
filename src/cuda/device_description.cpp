// SPDX-License-Identifier: Apache-2.0
#include "streampipe/cuda/device_description.hpp"

#include <fmt/format.h>

namespace streampipe {

nlohmann::json describe_device(const Device& d) {
  const auto& p = d.properties();
  const auto mem = d.memory_info();
  const auto link = d.pcie_link();
  return {{"index", d.index()},
          {"name", p.name},
          {"compute_capability", fmt::format("{}.{}", p.major, p.minor)},
          {"multiprocessors", p.multiProcessorCount},
          {"memory_total_bytes", mem.total_bytes},
          {"memory_free_bytes", mem.free_bytes},
          {"memory_bus_width_bits", p.memoryBusWidth},
          {"l2_cache_bytes", p.l2CacheSize},
          {"copy_engines", p.asyncEngineCount},
          {"concurrent_kernels", p.concurrentKernels != 0},
          {"max_threads_per_block", p.maxThreadsPerBlock},
          {"shared_memory_per_block_optin", p.sharedMemPerBlockOptin},
          {"pcie",
           {{"bus_id", link.bus_id},
            {"current_speed", link.current_speed},
            {"current_width", link.current_width},
            {"max_speed", link.max_speed},
            {"max_width", link.max_width}}}};
}

nlohmann::json link_json(const LinkLimits& limits) {
  nlohmann::json bw = nlohmann::json::object();
  for (const auto& f : limits.figures)
    bw[f.path] = {{"median_gbps", f.median_gbps},
                  {"min_gbps", f.min_gbps},
                  {"max_gbps", f.max_gbps},
                  {"bytes", f.bytes},
                  {"label", f.label}};
  return bw;
}

}  // namespace streampipe
