// SPDX-License-Identifier: Apache-2.0
#pragma once
// Internal to streampipe (not installed): why the CUDA runtime found no GPU, in words that
// send the user the right way. The runtime answers cudaErrorInsufficientDriver both when
// the driver is too old and when there is no driver at all; only the second is common (a
// laptop, a CI runner, a container started without the GPU), and "insufficient" would send
// its user to upgrade a driver that is not installed. Whether libcuda.so.1 loads tells the
// two apart.

#include <cuda_runtime_api.h>

#include <string>

namespace streampipe::detail {

struct DriverPresence {
  bool loaded = false;  // libcuda.so.1 could be loaded into this process
  int version = 0;      // cuDriverGetVersion's answer (e.g. 12040 for CUDA 12.4); 0: unknown
};

// This machine's driver: dlopen of libcuda.so.1 and cuDriverGetVersion (which needs no
// cuInit). Asked once per process; never throws.
[[nodiscard]] DriverPresence nvidia_driver() noexcept;

// Pure: what `status` (a failure of the runtime's device query) means on a machine with
// `driver`, for a runtime of `runtime_version`. "no NVIDIA driver found ..." without a
// driver, "the NVIDIA driver supports CUDA X.Y, older than ..." for one too old, "no CUDA
// device found ..." for cudaErrorNoDevice, else the runtime's own name and text.
[[nodiscard]] std::string no_gpu_reason(cudaError_t status, const DriverPresence& driver, int runtime_version);

}  // namespace streampipe::detail
