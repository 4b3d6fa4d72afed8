// SPDX-License-Identifier: Apache-2.0
#include "member.hpp"

#include "streampipe/cuda/device.hpp"

#include <optional>

namespace streampipe::pipeline::detail {

void build_member(Member& m, const MemberBuild& build) {
  const bool gpu = m.gpu();
  std::optional<CurrentDeviceGuard> on_device;
  if (gpu) {
    const Device device(m.device);
    on_device.emplace(device);
    m.numa_node = device.host_numa_node();
  }
  const int slots = m.slot_count();
  m.slots.reserve(static_cast<std::size_t>(slots));
  // A member's slots take its lanes in turn.
  for (int i = 0; i < slots; ++i) {
    const int local_lane = i % m.lanes;
    m.slots.push_back(std::make_unique<Slot>(i, m.first_lane + local_lane, local_lane, m, m.position, m.device, !gpu,
                                             static_cast<std::size_t>(build.max_batch), m.numa_node,
                                             build.staging_memory));
  }
  for (int l = 0; l < m.lanes; ++l) {
    const LaneConfig cfg{.lane = m.first_lane + l, .member_lane = l, .device = m.device, .slots = slots,
                         .max_batch = build.max_batch, .use_graphs = build.use_graphs,
                         .timed_stages = m.lanes <= hardware_queues(), .now_ms = build.now_ms,
                         .device_state = &m.state, .device_memory = build.device_memory};
    m.lane_queues.push_back(std::make_unique<LaneQueue>(gpu ? make_gpu_lane(cfg) : make_host_lane(cfg), build.complete));
  }
  const auto wait_inputs = [&m](int slot) {
    const Slot& s = *m.slots[static_cast<std::size_t>(slot)];
    m.lane_queues[static_cast<std::size_t>(s.member_lane)]->executor().wait_inputs(slot);
  };
  m.staging =
      std::make_unique<StagingPool>(gpu, build.staging_bytes, slots, wait_inputs, m.numa_node, build.staging_memory,
                                    gpu ? m.device : -1);
}

void stop_member(Member& m) noexcept {
  for (auto& lane : m.lane_queues) {
    try {
      lane->stop();
    } catch (...) {
      // Joining a thread failed (it cannot, for a joinable thread of ours): nothing to undo.
    }
  }
}

}  // namespace streampipe::pipeline::detail
