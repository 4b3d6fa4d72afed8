// SPDX-License-Identifier: Apache-2.0
#pragma once
// An engine's configuration: which options are accepted, the host threads they come to, and
// the line Engine::describe() prints.

#include "streampipe/pipeline/device_set.hpp"
#include "streampipe/pipeline/engine.hpp"

#include <string>
#include <vector>

namespace streampipe::pipeline::detail {

// The bounds of what an engine takes, the CLI's among them (--lanes, --threads): lanes per
// device (a GPU runs at most 128 grids at once, the planner's widest), slots per lane, items
// per batch, host workers (0: chosen), and devices in the set.
inline constexpr int kMaxLanes = 128;
inline constexpr int kMaxDepth = 4096;
inline constexpr int kMaxBatchItems = 65536;
inline constexpr int kMaxHostThreads = 1024;
inline constexpr int kMaxDevices = 64;

// The options as the engine runs them: graph replay keeps a staging block per slot (its
// addresses must not move). Throws std::invalid_argument naming the option, its value and
// its range when lanes, cpu_lanes, depth, batch_items, host_threads or the number of devices
// is outside the bounds above, or gpu_start_ms or gpu_stop_ms is negative.
[[nodiscard]] EngineOptions checked_options(EngineOptions options);

// options.host_threads, or when 0 or less one per core, within [2, 32].
[[nodiscard]] int host_worker_count(const EngineOptions& options) noexcept;

// "the CPU: 4 lanes; GPU 0 (NVIDIA H100 ...): 4 lanes x depth 2, ..." from the members as
// they are now. Names a GPU that has joined; Device's errors pass through.
[[nodiscard]] std::string describe_engine(const EngineOptions& options, const std::vector<DeviceReport>& members,
                                          int host_workers);

}  // namespace streampipe::pipeline::detail
