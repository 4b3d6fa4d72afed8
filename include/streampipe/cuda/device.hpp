// SPDX-License-Identifier: Apache-2.0
#pragma once
// A GPU named by explicit index. Properties are read once per device and cached for the
// process. Device::count() never throws for "no GPU here": it returns 0, and
// Device::unavailable_reason() says why, so callers can fall back to the host backend.
// The library's first call into the CUDA runtime asks for 32 hardware queues unless the
// program asked for fewer first (request_hardware_queues), so that many streams do not
// share the default 8.

#include <cuda_runtime_api.h>

#include <cstddef>
#include <optional>
#include <string>

namespace streampipe {

struct DeviceMemoryInfo {
  std::size_t free_bytes = 0;
  std::size_t total_bytes = 0;
};

struct PcieLink {
  std::string bus_id;        // e.g. "0000:17:00.0"
  std::string current_speed; // as the kernel reports it, e.g. "32.0 GT/s PCIe"; empty if unknown
  int current_width = 0;     // lanes; 0 if unknown
  std::string max_speed;
  int max_width = 0;
};

// The driver's hardware queues per GPU by default, and the most it makes.
inline constexpr int kDriverHardwareQueues = 8;
inline constexpr int kMostHardwareQueues = 32;
// Asks for enough hardware queues for `streams` streams busy at once on a GPU: the driver's 8
// where they suffice, else 32 (CUDA_DEVICE_MAX_CONNECTIONS). More queues make a context
// slower to create and to release (docs/engine.md), so a program that knows how many streams
// it keeps busy asks before its first CUDA call; the library's first runtime call asks for 32
// where nothing asked before. The first request, or the environment's own value, wins: the
// driver reads it once, when it initializes (any runtime call, cudaDriverGetVersion
// included). Thread-safe, never throws.
void request_hardware_queues(int streams) noexcept;
// The hardware queues this process's streams share: CUDA_DEVICE_MAX_CONNECTIONS as the
// environment says now (1-32), the driver's 8 when unset or not a number. Streams beyond it
// share queues, and a timed event recorded on a stream holds its queue until the work before
// it ends, so such streams' kernels then run one at a time per queue (docs/engine.md).
[[nodiscard]] int hardware_queues() noexcept;
// Whether this process has asked CUDA for its devices through streampipe (Device::count,
// unavailable_reason, any Device): the driver is initialized, so further queries are cheap.
[[nodiscard]] bool cuda_started() noexcept;

class Device {
 public:
  explicit Device(int index);  // throws std::out_of_range for an index that does not exist

  [[nodiscard]] static int count() noexcept;
  // nullopt when at least one device is usable; otherwise why not: "no NVIDIA driver found
  // ..." where no driver is installed (the runtime would say "insufficient driver"), the
  // driver's and the runtime's CUDA versions where the driver is too old, else the runtime's
  // explanation.
  [[nodiscard]] static std::optional<std::string> unavailable_reason();
  // Whether an NVIDIA driver (libcuda.so.1) loads in this process. No CUDA call: it starts
  // no GPU, so a caller may ask before deciding whether to start one. Never throws.
  [[nodiscard]] static bool driver_installed() noexcept;
  [[nodiscard]] static Device current();

  [[nodiscard]] int index() const noexcept { return index_; }
  [[nodiscard]] const cudaDeviceProp& properties() const;
  [[nodiscard]] std::string name() const { return properties().name; }
  [[nodiscard]] int multiprocessors() const { return properties().multiProcessorCount; }
  [[nodiscard]] int copy_engines() const { return properties().asyncEngineCount; }
  // The host NUMA node nearest the GPU, as the driver reports it (cudaDevAttrHostNumaId),
  // or -1 where the system has no NUMA or the driver does not say. Throws CudaError.
  [[nodiscard]] int host_numa_node() const;
  [[nodiscard]] DeviceMemoryInfo memory_info() const;
  [[nodiscard]] PcieLink pcie_link() const;

  void make_current() const;
  void synchronize() const;

  friend bool operator==(const Device& a, const Device& b) noexcept { return a.index_ == b.index_; }

 private:
  int index_;
};

// Makes a device current for a scope and restores what was current before on exit. A
// thread that had no context current (a new thread) is left with none: making "device 0"
// current there would create GPU 0's context (cudaSetDevice does since CUDA 12) in a
// process that may never use GPU 0. Throws CudaError when the device cannot be made current.
class CurrentDeviceGuard {
 public:
  explicit CurrentDeviceGuard(const Device& device);
  ~CurrentDeviceGuard();
  CurrentDeviceGuard(const CurrentDeviceGuard&) = delete;
  CurrentDeviceGuard& operator=(const CurrentDeviceGuard&) = delete;

 private:
  int previous_ = -1;  // -1: no context was current
  bool changed_ = false;
};

}  // namespace streampipe
