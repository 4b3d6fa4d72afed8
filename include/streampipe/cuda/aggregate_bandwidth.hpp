// SPDX-License-Identifier: Apache-2.0
#pragma once
// What every GPU of a set moves when all copy at once: a host whose GPUs share a PCIe
// switch, a root port or a memory channel moves less in total than the sum of the
// single-GPU figures (measure_link), and work spread over the GPUs is held to this total.
//
// One thread per device, each with its own streams, device buffers and pinned host blocks
// (allocated before any timing). Every run starts all threads together at a barrier; each
// takes the host clock, enqueues the same pinned copy loop as measure_link on its own
// stream, waits for its stream and takes the clock again. A run's rate is all the bytes
// moved / (latest end - earliest start): the host clock, because events of different
// devices cannot be compared. Figures are the median (min, max) over `runs` runs after
// `warmup` untimed ones.

#include "streampipe/cuda/bandwidth.hpp"
#include "streampipe/cuda/device.hpp"

#include <span>
#include <string>
#include <vector>

namespace streampipe {

struct AggregateBandwidth {
  std::vector<int> devices;  // device indices, in the order given
  // "aggregate_h2d", "aggregate_d2h", "aggregate_bidirectional"; bytes counts every device
  // (and both directions for the last).
  std::vector<BandwidthFigure> figures;
  // The median figure for `path`; 0 when not measured.
  [[nodiscard]] double gbps(const std::string& path) const;
};

// Measures the pinned H2D, D2H and both-directions rates of `devices` copying at once,
// options.bytes per direction per device (options.pageable is ignored: pageable copies are
// bounded by the host's staging, not the links). The same device may appear twice (its
// threads then share its copy engines). Throws std::invalid_argument for an empty set and
// the first CudaError any thread met, after every thread has stopped.
[[nodiscard]] AggregateBandwidth measure_aggregate(std::span<const Device> devices, const BandwidthOptions& options = {});

}  // namespace streampipe
