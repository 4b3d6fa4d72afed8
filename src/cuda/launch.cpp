// SPDX-License-Identifier: Apache-2.0
#include "streampipe/cuda/launch.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

namespace streampipe {

LaunchConfig LaunchConfig::for_elements(const Device& device, std::size_t n, unsigned block,
                                        unsigned per_thread, unsigned max_blocks_per_sm) {
  if (block == 0 || per_thread == 0)
    throw std::invalid_argument("block size and elements per thread must be positive");
  const auto& p = device.properties();
  const std::size_t per_block = std::size_t{block} * per_thread;
  std::size_t blocks = std::max<std::size_t>(1, (n + per_block - 1) / per_block);
  if (max_blocks_per_sm > 0)
    blocks = std::min<std::size_t>(blocks, std::size_t{max_blocks_per_sm} * p.multiProcessorCount);
  if (blocks > static_cast<std::size_t>(p.maxGridSize[0]))
    throw std::invalid_argument(fmt::format(
        "{} elements need {} blocks of {} threads x {} per thread; the device allows {} blocks "
        "in x (use a grid-stride kernel with max_blocks_per_sm)",
        n, blocks, block, per_thread, p.maxGridSize[0]));
  LaunchConfig cfg;
  cfg.grid = dim3(static_cast<unsigned>(blocks), 1, 1);
  cfg.block = dim3(block, 1, 1);
  validate(cfg, device);
  return cfg;
}

void validate(const LaunchConfig& c, const Device& device) {
  const auto& p = device.properties();
  const unsigned long long threads =
      static_cast<unsigned long long>(c.block.x) * c.block.y * c.block.z;
  if (threads == 0 || c.grid.x == 0 || c.grid.y == 0 || c.grid.z == 0)
    throw std::invalid_argument(fmt::format("empty launch configuration {}", describe(c)));
  if (threads > static_cast<unsigned long long>(p.maxThreadsPerBlock))
    throw std::invalid_argument(fmt::format("block of {} threads exceeds the device limit of {} ({})",
                                            threads, p.maxThreadsPerBlock, describe(c)));
  const unsigned bdim[3] = {c.block.x, c.block.y, c.block.z};
  const unsigned gdim[3] = {c.grid.x, c.grid.y, c.grid.z};
  for (int i = 0; i < 3; ++i) {
    if (bdim[i] > static_cast<unsigned>(p.maxThreadsDim[i]))
      throw std::invalid_argument(fmt::format("block dimension {} = {} exceeds the device limit {}",
                                              "xyz"[i], bdim[i], p.maxThreadsDim[i]));
    if (gdim[i] > static_cast<unsigned>(p.maxGridSize[i]))
      throw std::invalid_argument(fmt::format("grid dimension {} = {} exceeds the device limit {}",
                                              "xyz"[i], gdim[i], p.maxGridSize[i]));
  }
  if (c.dynamic_shared_bytes > p.sharedMemPerBlockOptin)
    throw std::invalid_argument(fmt::format(
        "{} bytes of dynamic shared memory exceed the device's opt-in limit of {} per block",
        c.dynamic_shared_bytes, p.sharedMemPerBlockOptin));
}

std::string describe(const LaunchConfig& c) {
  return fmt::format("grid ({},{},{}) block ({},{},{}) shared {} B", c.grid.x, c.grid.y, c.grid.z,
                     c.block.x, c.block.y, c.block.z, c.dynamic_shared_bytes);
}

namespace detail {

void launch_raw(StreamRef stream, const LaunchConfig& config, const void* kernel, void** args,
                const char* kernel_name) {
  validate(config, stream.device());
  const cudaError_t status = cudaLaunchKernel(kernel, config.grid, config.block, args,
                                              config.dynamic_shared_bytes, stream.handle());
  if (status != cudaSuccess) {
    const std::string call = fmt::format("cudaLaunchKernel({}, {})", kernel_name, describe(config));
    throw_cuda_error(status, call.c_str(), __FILE__, __LINE__);
  }
}

}  // namespace detail
}  // namespace streampipe
