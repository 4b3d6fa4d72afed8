// SPDX-License-Identifier: Apache-2.0
#pragma once
// Internal: times a GEMM as a batcher with several lanes runs it under full load. Each of
// `lanes` streams runs kSteps GEMMs back to back, all starting together after the L2 cache
// has been overwritten. Lane j's k-th GEMM reads weight copy (j + k) mod copies, so, as in a
// forward pass, each GEMM finds its weights out of L2 and no two lanes read the same weights
// at the same moment (lanes of a real batcher drift out of phase). The time is the whole
// span over lanes × kSteps: one GEMM at full load, where the SMs that one GEMM leaves idle
// (a grid smaller than the GPU, a wave's tail, a launch gap) run another lane's work.

#include "streampipe/cuda/device.hpp"
#include "streampipe/cuda/device_buffer.hpp"
#include "streampipe/cuda/event.hpp"
#include "streampipe/cuda/stream.hpp"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

namespace streampipe::serving::detail {

class BusyGemmTimer {
 public:
  static constexpr int kSteps = 4;

  // What lane `lane`'s `step`-th GEMM reads and writes.
  struct Operands {
    const std::uint16_t* weights = nullptr;
    const std::uint16_t* x = nullptr;
    std::uint16_t* y = nullptr;
    std::byte* workspace = nullptr;
  };

  // Scratch on `stream` (stream-ordered, freed after the work enqueued on it): weight copies
  // of `weight_count` bf16 values (kSteps of them when one fits in the L2, one otherwise:
  // then little of it survives a step), and per lane x (pseudo-random), y and a workspace.
  // `flush`/`sink` (l2_eviction.cuh; `flush_bytes` is twice the L2) overwrite the L2 before
  // each timed span.
  BusyGemmTimer(const Device& device, StreamRef stream, int lanes, const std::uint16_t* weights,
                std::size_t weight_count, std::size_t x_count, std::size_t y_count, std::size_t workspace_bytes,
                const std::byte* flush, std::size_t flush_bytes, unsigned* sink);
  BusyGemmTimer(const BusyGemmTimer&) = delete;
  BusyGemmTimer& operator=(const BusyGemmTimer&) = delete;

  [[nodiscard]] int lanes() const noexcept { return lanes_; }
  [[nodiscard]] Operands operands(int lane, int step) const;

  // `launch(lane, step, stream)` enqueues that GEMM on `stream` and says whether the library
  // accepted it. Microseconds per GEMM at full load, the median of `reps` spans; nullopt
  // when a launch was refused. Synchronizes the stream.
  using Launch = std::function<bool(int lane, int step, StreamRef stream)>;
  [[nodiscard]] std::optional<double> time(const Launch& launch, int reps);

 private:
  [[nodiscard]] std::byte* base() const;  // the scratch, 256-byte aligned
  [[nodiscard]] std::byte* lane_base(int lane) const;

  StreamRef stream_;
  int lanes_ = 1;
  std::size_t copies_ = 1;
  std::size_t weight_count_ = 0, x_count_ = 0, y_count_ = 0, workspace_bytes_ = 0;
  const std::uint16_t* weights_ = nullptr;
  const std::byte* flush_ = nullptr;
  std::size_t flush_bytes_ = 0;
  unsigned* sink_ = nullptr;
  std::vector<Stream> extra_;  // lanes 1.. (lane 0 runs on stream_)
  Event start_, stop_;
  std::vector<Event> done_;
  std::optional<StreamOrderedBuffer<std::byte>> scratch_;
  std::size_t x_offset_ = 0, y_offset_ = 0, ws_offset_ = 0, lane_bytes_ = 0;
};

}  // namespace streampipe::serving::detail
