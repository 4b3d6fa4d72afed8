// SPDX-License-Identifier: Apache-2.0
#pragma once
// An engine's configuration: which options are accepted, the backend and host threads they
// come to, and the line Engine::describe() prints.

#include "streampipe/pipeline/engine.hpp"
#include "streampipe/pipeline/operation.hpp"

#include <string>
#include <vector>

namespace streampipe::pipeline::detail {

// The bounds of what an engine takes, the CLI's among them (gray --lanes 0-64, --threads
// 0-1024): lanes per device, slots per lane, items per batch, host workers (0: chosen), and
// devices in the set.
inline constexpr int kMaxLanes = 64;
inline constexpr int kMaxDepth = 4096;
inline constexpr int kMaxBatchItems = 65536;
inline constexpr int kMaxHostThreads = 1024;
inline constexpr int kMaxDevices = 64;

// The options as the engine runs them: graph replay keeps a staging block per slot (its
// addresses must not move). Throws std::invalid_argument naming the option, its value and
// its range when lanes, depth, batch_items, host_threads or the number of devices is
// outside the bounds above.
[[nodiscard]] EngineOptions checked_options(EngineOptions options);

// options.backend, or for automatic the GPU when one is usable, else the host. Throws
// std::invalid_argument when `op` has no form for that backend.
[[nodiscard]] Backend resolve_backend(const EngineOptions& options, const Operation& op);

// options.devices, or when empty every usable GPU (GPU backend) or one simulated device 0
// (host backend). Throws std::out_of_range naming a GPU index that does not exist, and
// std::invalid_argument for a negative index.
[[nodiscard]] std::vector<int> resolve_devices(const EngineOptions& options, Backend backend);

// options.host_threads, or when 0 or less one per core, within [2, 32].
[[nodiscard]] int host_worker_count(const EngineOptions& options) noexcept;

// On the GPU backend it asks the device for its name; Device's errors pass through.
[[nodiscard]] std::string describe_engine(const EngineOptions& options, Backend backend,
                                          const std::vector<int>& devices, int host_workers);

}  // namespace streampipe::pipeline::detail
