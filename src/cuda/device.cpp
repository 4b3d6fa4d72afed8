// SPDX-License-Identifier: Apache-2.0
#include "streampipe/cuda/device.hpp"

#include "driver_api.hpp"
#include "driver_presence.hpp"
#include "streampipe/cuda/error.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <mutex>
#include <stdexcept>

namespace streampipe {
namespace {

std::atomic<bool> started{false};

cudaError_t query_count(int& n) noexcept {
  request_hardware_queues(kMostHardwareQueues);
  started.store(true, std::memory_order_relaxed);
  n = 0;
  const cudaError_t status = cudaGetDeviceCount(&n);
  if (status != cudaSuccess) {
    detail::clear_expected_error();  // "no device" is not sticky; keep the thread's error state clean
    n = 0;
  }
  return status;
}

// Properties are immutable for the life of the process; cache them per device.
struct PropertyCache {
  static constexpr int kMaxDevices = 64;
  std::array<std::once_flag, kMaxDevices> once;
  std::array<cudaDeviceProp, kMaxDevices> props{};
};

PropertyCache& property_cache() {
  static PropertyCache cache;
  return cache;
}

std::string read_sysfs(const std::string& path) {
  std::ifstream in(path);
  std::string value;
  if (in) std::getline(in, value);
  return value;
}

int to_int(const std::string& s) {
  try {
    return s.empty() ? 0 : std::stoi(s);
  } catch (const std::exception&) {
    return 0;
  }
}

}  // namespace

bool cuda_started() noexcept { return started.load(std::memory_order_relaxed); }

void request_hardware_queues(int streams) noexcept {
  // Streams share CUDA_DEVICE_MAX_CONNECTIONS hardware queues; more busy streams than queues
  // create false dependencies between them (one lane's copy waits behind another lane's
  // kernel). setenv() without overwriting keeps the first request and the user's own value,
  // and changes nothing once the variable is set. Set after the driver initialized it is
  // ignored (docs/python.md, "the engine's hardware queues").
  (void)::setenv("CUDA_DEVICE_MAX_CONNECTIONS", streams <= kDriverHardwareQueues ? "8" : "32", 0);
}

int hardware_queues() noexcept {
  const char* value = std::getenv("CUDA_DEVICE_MAX_CONNECTIONS");
  if (value == nullptr || *value == '\0') return kDriverHardwareQueues;
  char* end = nullptr;
  const long n = std::strtol(value, &end, 10);
  if (*end != '\0' || n < 1) return kDriverHardwareQueues;
  return static_cast<int>(std::min<long>(n, kMostHardwareQueues));
}

Device::Device(int index) : index_(index) {
  const int n = count();
  if (index < 0 || index >= n || index >= PropertyCache::kMaxDevices)
    throw std::out_of_range(fmt::format("GPU index {} does not exist ({} visible)", index, n));
}

int Device::count() noexcept {
  // The set of visible devices is fixed for the life of the process; ask once.
  static const int n = [] {
    int value = 0;
    (void)query_count(value);
    return value;
  }();
  return n;
}

std::optional<std::string> Device::unavailable_reason() {
  int n = 0;
  const cudaError_t status = query_count(n);
  if (status == cudaSuccess && n > 0) return std::nullopt;
  std::string reason =
      detail::no_gpu_reason(status == cudaSuccess ? cudaErrorNoDevice : status, detail::nvidia_driver(), CUDART_VERSION);
  // The commonest way to see no GPU on a machine that has some.
  if (const char* visible = std::getenv("CUDA_VISIBLE_DEVICES"); visible != nullptr && status != cudaErrorInsufficientDriver)
    reason += fmt::format(" (CUDA_VISIBLE_DEVICES=\"{}\" chooses which GPUs are seen)", visible);
  return reason;
}

bool Device::driver_installed() noexcept { return detail::nvidia_driver().loaded; }

Device Device::current() {
  int index = 0;
  SP_CUDA_CHECK(cudaGetDevice(&index));
  return Device(index);
}

int Device::host_numa_node() const {
  int node = -1;
  const cudaError_t status = cudaDeviceGetAttribute(&node, cudaDevAttrHostNumaId, index_);
  // Drivers before the attribute existed refuse it: no NUMA id to go by, not an error.
  if (status == cudaErrorInvalidValue) {
    detail::clear_expected_error();
    return -1;
  }
  SP_CUDA_CHECK(status);
  return node;
}

const cudaDeviceProp& Device::properties() const {
  auto& cache = property_cache();
  std::call_once(cache.once[index_],
                 [&] { SP_CUDA_CHECK(cudaGetDeviceProperties(&cache.props[index_], index_)); });
  return cache.props[index_];
}

DeviceMemoryInfo Device::memory_info() const {
  CurrentDeviceGuard guard(*this);
  DeviceMemoryInfo info;
  SP_CUDA_CHECK(cudaMemGetInfo(&info.free_bytes, &info.total_bytes));
  return info;
}

PcieLink Device::pcie_link() const {
  PcieLink link;
  std::array<char, 32> bus{};
  SP_CUDA_CHECK(cudaDeviceGetPCIBusId(bus.data(), static_cast<int>(bus.size()), index_));
  link.bus_id = bus.data();
  // The runtime does not expose link generation/width; Linux sysfs does (lower-case bus id).
  std::string id = link.bus_id;
  for (auto& c : id) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  const std::string dir = "/sys/bus/pci/devices/" + id + "/";
  link.current_speed = read_sysfs(dir + "current_link_speed");
  link.current_width = to_int(read_sysfs(dir + "current_link_width"));
  link.max_speed = read_sysfs(dir + "max_link_speed");
  link.max_width = to_int(read_sysfs(dir + "max_link_width"));
  return link;
}

void Device::make_current() const { SP_CUDA_CHECK(cudaSetDevice(index_)); }

void Device::synchronize() const {
  CurrentDeviceGuard guard(*this);
  SP_CUDA_CHECK(cudaDeviceSynchronize());
}

CurrentDeviceGuard::CurrentDeviceGuard(const Device& device) {
  // cudaGetDevice says 0 on a thread with no context current; the driver tells them apart.
  // Without its entry points the guard restores device 0, as the runtime alone would.
  const driver::Api& api = driver::resolved();
  CUcontext current = nullptr;
  const bool none_current = api.ctx_get_current != nullptr && api.ctx_pop_current != nullptr &&
                            api.ctx_get_current(&current) == CUDA_SUCCESS && current == nullptr;
  if (!none_current) SP_CUDA_CHECK(cudaGetDevice(&previous_));
  if (none_current || previous_ != device.index()) {
    SP_CUDA_CHECK(cudaSetDevice(device.index()));
    changed_ = true;
  }
}

CurrentDeviceGuard::~CurrentDeviceGuard() {
  if (!changed_) return;
  if (previous_ >= 0) {
    SP_CUDA_CHECK_NOTHROW(cudaSetDevice(previous_));
    return;
  }
  // cudaSetDevice put the device's context on the thread's empty stack: take it off again.
  CUcontext popped = nullptr;
  (void)driver::resolved().ctx_pop_current(&popped);
}

}  // namespace streampipe
