// SPDX-License-Identifier: Apache-2.0
#include "info_report.hpp"

#include "json_text.hpp"

#include "commands.hpp"
#include "streampipe/cuda/device_description.hpp"
#include "devices_option.hpp"
#include "info_links.hpp"
#include "streampipe/cuda/bandwidth.hpp"
#include "streampipe/report/json_schema.hpp"
#include "streampipe/pipeline/host_copy.hpp"
#include "streampipe/host/host_info.hpp"
#include "streampipe/report/table.hpp"

#include <fmt/format.h>

#include <thread>
#include <vector>

namespace streampipe::cli {
namespace {

void print_device(const Outputs& out, const nlohmann::json& j) {
  const double gib = 1024.0 * 1024.0 * 1024.0;
  out.print("GPU {}: {}\n", j["index"].get<int>(), j["name"].get<std::string>());
  out.print("  compute capability {}, {} SMs, L2 {:.0f} MiB\n", j["compute_capability"].get<std::string>(),
            j["multiprocessors"].get<int>(), j["l2_cache_bytes"].get<double>() / (1024 * 1024));
  out.print("  memory {:.1f} GiB ({:.1f} GiB free), {}-bit bus\n",
            j["memory_total_bytes"].get<double>() / gib, j["memory_free_bytes"].get<double>() / gib,
            j["memory_bus_width_bits"].get<int>());
  out.print("  copy engines {}, concurrent kernels {}\n", j["copy_engines"].get<int>(),
            j["concurrent_kernels"].get<bool>() ? "yes" : "no");
  const auto& pcie = j["pcie"];
  const auto speed = pcie["current_speed"].get<std::string>();
  if (speed.empty())
    out.print("  PCIe {}: link speed not reported by this system\n", pcie["bus_id"].get<std::string>());
  else
    out.print("  PCIe {}: {} x{} (max {} x{})\n", pcie["bus_id"].get<std::string>(), speed,
              pcie["current_width"].get<int>(), pcie["max_speed"].get<std::string>(),
              pcie["max_width"].get<int>());
}

}  // namespace

int run_info(const InfoOptions& o, const Outputs& out, nlohmann::json* json_out) {
  const std::vector<int> indices = select_gpus(o.devices);  // bad usage before anything is printed
  const auto host = host::describe_host();
  nlohmann::json j;
  j["host"] = host;
  out.print("host: {} | {} | {} cores | {:.1f} GiB | CUDA runtime {} | driver {} (CUDA {})\n", host.hostname,
            host.cpu_model, host.cores, host.memory_gib,
            host::format_cuda_version(host.cuda_runtime_version),
            host.nvidia_driver.empty() ? std::string("none") : host.nvidia_driver,
            host::format_cuda_version(host.cuda_driver_version));
  j["devices"] = nlohmann::json::array();

  const auto reason = Device::unavailable_reason();
  if (reason) {
    out.print("no CUDA device is usable here ({}).\n"
              "streampipe tools will run on the host backend (threads and memcpy), slowly.\n",
              *reason);
    j["gpu_unavailable_reason"] = *reason;
  } else {
    std::vector<Device> devices;
    std::vector<LinkLimits> links;
    BandwidthOptions bo;
    bo.bytes = static_cast<std::size_t>(o.size_mib) << 20;
    bo.runs = o.runs;
    bo.warmup = o.warmup;
    bo.pageable = !o.no_pageable;
    for (const int index : indices) {
      const Device device(index);
      devices.push_back(device);
      auto dj = describe_device(device);
      print_device(out, dj);
      if (!o.no_measure) {
        const auto& limits = links.emplace_back(measure_link(device, bo));
        report::Table table({"path", "GB/s", "min", "max"});
        for (const auto& f : limits.figures)
          table.add_row({f.label, fmt::format("{:.1f}", f.median_gbps), fmt::format("{:.1f}", f.min_gbps),
                         fmt::format("{:.1f}", f.max_gbps)});
        out.print("{}", table.str(fmt::format("  measured: {} MiB per copy, median of {} runs after {} "
                                               "warm-up (min/max across runs)",
                                               o.size_mib, o.runs, o.warmup)));
        dj["bandwidth"] = link_json(limits);
        dj["measurement"] = {{"bytes_per_copy", bo.bytes}, {"runs", bo.runs}, {"warmup", bo.warmup}};
      }
      j["devices"].push_back(dj);
    }
    if (!o.no_measure) report_links(out, devices, links, bo, j);
    if (!o.no_measure) {
      // Staging pageable data costs a host copy into pinned memory: its bandwidth bounds what
      // pageable input can reach, so it belongs next to the link figures.
      const int threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
      const auto figures = pipeline::measure_host_copy(static_cast<std::size_t>(o.size_mib) << 20, threads, o.runs);
      report::Table table({"host copy, pageable -> pinned", "threads", "GB/s"});
      nlohmann::json hj = nlohmann::json::array();
      for (const auto& f : figures) {
        table.add_row({f.streaming ? "streaming stores" : "memcpy", std::to_string(f.threads), fmt::format("{:.1f}", f.gbps)});
        hj.push_back({{"threads", f.threads}, {"streaming", f.streaming}, {"gbps", f.gbps}});
      }
      out.print("{}", table.str(fmt::format("host staging copy ({} MiB, median of {} runs)", o.size_mib, o.runs)));
      j["host_copy"] = hj;
    }
  }
  out.write(o.json_path, json_text(report::stamped(j, "info"), 2));
  if (json_out != nullptr) *json_out = std::move(j);
  return 0;
}

}  // namespace streampipe::cli
