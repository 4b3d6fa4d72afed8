// SPDX-License-Identifier: Apache-2.0
#pragma once
// One member of an engine's device set: the CPU's lanes, a GPU or a simulated GPU, with its
// own lanes, slots and input staging. The CPU's member is built with the engine; a GPU's on
// its own start thread (its context first), after which the engine lets it join the set.

#include "lane_queue.hpp"
#include "slot.hpp"
#include "staging_pool.hpp"

#include "streampipe/pipeline/device_set.hpp"
#include "streampipe/pipeline/operation.hpp"

#include <cstddef>
#include <memory>
#include <optional>
#include <vector>

namespace streampipe::pipeline::detail {

struct Member {
  std::size_t position = 0;  // in the set
  int device = kCpuDevice;   // the GPU, a simulated GPU, or kCpuDevice
  bool simulated = false;
  int first_lane = 0;        // engine-wide number of its lane 0
  int lanes = 0;
  int depth = 0;
  int numa_node = -1;        // the host node nearest its GPU; -1 unknown
  DeviceReport report;       // guarded by the engine's lock once the member is shared
  std::vector<std::unique_ptr<Slot>> slots;
  std::vector<std::unique_ptr<LaneQueue>> lane_queues;
  std::unique_ptr<StagingPool> staging;
  std::shared_ptr<void> state;  // what Operation::start_device returned

  // A real GPU: the device form on CUDA streams. Otherwise the host form on threads.
  [[nodiscard]] bool gpu() const noexcept { return device != kCpuDevice && !simulated; }
  [[nodiscard]] int slot_count() const noexcept { return lanes * depth; }
};

struct MemberBuild {
  int max_batch = 1;
  bool use_graphs = false;
  std::size_t staging_bytes = 0;
  std::optional<DeviceResourceRef> device_memory;  // EngineOptions::device_memory
  std::optional<HostResourceRef> staging_memory;   // EngineOptions::staging_memory
  double (*now_ms)() = nullptr;
  LaneQueue::Complete complete;
};

// Builds `m`'s slots, lanes (a stream or a thread each, with their completion threads) and
// staging; for a GPU, on its device (made current). Throws what CUDA or thread creation
// throws; `m` is then left partly built, for its destructor to release.
void build_member(Member& m, const MemberBuild& build);

// Stops the member's lanes: each completes what it was given, then its threads end.
void stop_member(Member& m) noexcept;

// Releases what Operation::start_device made for each member (the GPUs in parallel, each
// with its device current), then the members themselves. Their lanes must be stopped.
void release_members(std::vector<std::unique_ptr<Member>>& members) noexcept;

}  // namespace streampipe::pipeline::detail
