// SPDX-License-Identifier: Apache-2.0
#include "driver_presence.hpp"

#include "streampipe/host/host_info.hpp"

#include <dlfcn.h>
#include <fmt/format.h>

namespace streampipe::detail {
namespace {

DriverPresence probe() noexcept {
  DriverPresence d;
  // RTLD_LOCAL: the runtime finds the driver on its own; this handle only asks its version.
  // It is never closed: the runtime keeps the same library loaded anyway.
  void* library = ::dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (library == nullptr) return d;
  d.loaded = true;
  using GetVersion = int (*)(int*);
  if (auto* get = reinterpret_cast<GetVersion>(::dlsym(library, "cuDriverGetVersion")); get != nullptr) {
    int v = 0;
    if (get(&v) == 0) d.version = v;
  }
  return d;
}

}  // namespace

DriverPresence nvidia_driver() noexcept {
  static const DriverPresence d = probe();
  return d;
}

std::string no_gpu_reason(cudaError_t status, const DriverPresence& driver, int runtime_version) {
  if (!driver.loaded)
    return "no NVIDIA driver found (libcuda.so.1 cannot be loaded): this machine has no NVIDIA GPU, or its driver is "
           "not installed";
  if (status == cudaErrorInsufficientDriver) {
    const std::string supports =
        driver.version > 0 ? fmt::format("supports CUDA {}", host::format_cuda_version(driver.version)) : "is of an unknown version";
    return fmt::format("the NVIDIA driver {}, older than this build's CUDA {} runtime: upgrade the driver "
                       "(cudaErrorInsufficientDriver)",
                       supports, host::format_cuda_version(runtime_version));
  }
  if (status == cudaErrorNoDevice) return "no CUDA device found: the NVIDIA driver is loaded but reports no GPU";
  return fmt::format("{}: {}", cudaGetErrorName(status), cudaGetErrorString(status));
}

}  // namespace streampipe::detail
