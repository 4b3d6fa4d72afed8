// SPDX-License-Identifier: Apache-2.0
#include "commands.hpp"

#include "streampipe/cuda/device.hpp"

#include <fmt/format.h>

namespace streampipe::cli {

bool resolve_gpu_backend(const std::string& backend, int device) {
  bool use_gpu = false;
  if (backend == "gpu") {
    if (Device::count() == 0)
      throw UsageError(fmt::format("--backend gpu: no usable GPU ({})", Device::unavailable_reason().value_or("?")));
    use_gpu = true;
  } else if (backend == "auto") {
    use_gpu = Device::count() > 0;
  } else if (backend != "host") {
    throw UsageError(fmt::format("--backend '{}' is not one of auto, gpu, host", backend));
  }
  if (use_gpu && device >= Device::count())
    throw UsageError(fmt::format("--device {}: this machine has {} GPU(s)", device, Device::count()));
  return use_gpu;
}

}  // namespace streampipe::cli
