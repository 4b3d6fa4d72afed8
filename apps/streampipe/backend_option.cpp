// SPDX-License-Identifier: Apache-2.0
#include "commands.hpp"

#include "streampipe/cuda/device.hpp"

#include <fmt/format.h>

namespace streampipe::cli {

bool resolve_backend(const std::string& backend) {
  if (backend == "gpu") {
    if (Device::count() == 0)
      throw UsageError(fmt::format("--backend gpu: no usable GPU ({})", Device::unavailable_reason().value_or("?")));
    return true;
  }
  if (backend == "auto") return Device::count() > 0;
  if (backend != "host") throw UsageError(fmt::format("--backend '{}' is not one of auto, gpu, host", backend));
  return false;
}

}  // namespace streampipe::cli
