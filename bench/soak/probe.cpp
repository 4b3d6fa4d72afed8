// SPDX-License-Identifier: Apache-2.0
#include "soak/probe.hpp"

#include "streampipe/cuda/device.hpp"
#include "streampipe/cuda/error.hpp"
#include "streampipe/cuda/pinned_pool.hpp"

#include <cuda_runtime.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <stdexcept>

namespace streampipe::bench::soak {

std::size_t resident_bytes() {
  std::ifstream statm("/proc/self/statm");
  std::size_t size_pages = 0, resident_pages = 0;
  if (!(statm >> size_pages >> resident_pages)) throw std::runtime_error("cannot read /proc/self/statm");
  return resident_pages * static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
}

std::size_t thread_count() {
  std::error_code ec;
  std::size_t n = 0;
  for (std::filesystem::directory_iterator it("/proc/self/task", ec), end; !ec && it != end; it.increment(ec)) ++n;
  if (ec || n == 0) throw std::runtime_error("cannot list /proc/self/task: " + ec.message());
  return n;
}

std::size_t pinned_bytes() {
  const auto s = PinnedPool::global().stats();
  return s.bytes_cached + s.bytes_in_use;
}

std::size_t device_used_bytes(int device) {
  const CurrentDeviceGuard guard{Device(device)};
  std::size_t free = 0, total = 0;
  SP_CUDA_CHECK(cudaMemGetInfo(&free, &total));
  return total - free;
}

}  // namespace streampipe::bench::soak
