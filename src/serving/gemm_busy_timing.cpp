// SPDX-License-Identifier: Apache-2.0
#include "gemm_busy_timing.hpp"

#include "l2_eviction.cuh"
#include "mlp_convert.cuh"
#include "streampipe/cuda/error.hpp"
#include "streampipe/report/statistics.hpp"

#include <algorithm>
#include <stdexcept>

namespace streampipe::serving::detail {

namespace {

constexpr std::size_t kAlignment = 256;  // cuBLASLt's default minimum alignment of A, B, C, D
constexpr std::size_t aligned(std::size_t bytes) { return (bytes + kAlignment - 1) / kAlignment * kAlignment; }

}  // namespace

BusyGemmTimer::BusyGemmTimer(const Device& device, StreamRef stream, int lanes, const std::uint16_t* weights,
                             std::size_t weight_count, std::size_t x_count, std::size_t y_count,
                             std::size_t workspace_bytes, const std::byte* flush, std::size_t flush_bytes,
                             unsigned* sink)
    : stream_(stream),
      lanes_(lanes),
      weight_count_(weight_count),
      x_count_(x_count),
      y_count_(y_count),
      workspace_bytes_(workspace_bytes),
      weights_(weights),
      flush_(flush),
      flush_bytes_(flush_bytes),
      sink_(sink),
      start_(device),
      stop_(device) {
  if (lanes < 1) throw std::invalid_argument("BusyGemmTimer: at least one lane");
  const std::size_t weight_bytes = aligned(weight_count * sizeof(std::uint16_t));
  // Weights that fit in the L2 (half the flush) would survive from one step to the next:
  // then every step of a lane reads another copy, as every layer of a forward pass reads
  // its own.
  copies_ = weight_bytes * 2 > flush_bytes ? 1 : static_cast<std::size_t>(kSteps);
  x_offset_ = (copies_ - 1) * weight_bytes;
  y_offset_ = aligned(x_count * sizeof(std::uint16_t));
  ws_offset_ = y_offset_ + aligned(y_count * sizeof(std::uint16_t));
  lane_bytes_ = ws_offset_ + aligned(std::max<std::size_t>(workspace_bytes, 1));
  const std::size_t total = x_offset_ + static_cast<std::size_t>(lanes) * lane_bytes_;
  scratch_.emplace(stream, total + kAlignment);
  for (std::size_t c = 1; c < copies_; ++c)
    SP_CUDA_CHECK(cudaMemcpyAsync(base() + (c - 1) * weight_bytes, weights, weight_count * sizeof(std::uint16_t),
                                  cudaMemcpyDeviceToDevice, stream.handle()));
  for (int l = 0; l < lanes; ++l)
    fill_bf16_pattern(stream, reinterpret_cast<std::uint16_t*>(lane_base(l)), x_count, 1.0f,
                      11u + static_cast<unsigned>(l));
  for (int l = 1; l < lanes; ++l) {
    extra_.emplace_back(device);
    done_.emplace_back(device, EventTiming::disabled);
  }
}

std::byte* BusyGemmTimer::base() const {
  const auto address = reinterpret_cast<std::uintptr_t>(scratch_->data());
  return scratch_->data() + (aligned(address) - address);
}

std::byte* BusyGemmTimer::lane_base(int lane) const {
  return base() + x_offset_ + static_cast<std::size_t>(lane) * lane_bytes_;
}

BusyGemmTimer::Operands BusyGemmTimer::operands(int lane, int step) const {
  const std::size_t copy = static_cast<std::size_t>(lane + step) % copies_;
  Operands o;
  o.weights = copy == 0 ? weights_
                        : reinterpret_cast<const std::uint16_t*>(
                              base() + (copy - 1) * aligned(weight_count_ * sizeof(std::uint16_t)));
  std::byte* lane_bytes = lane_base(lane);
  o.x = reinterpret_cast<const std::uint16_t*>(lane_bytes);
  o.y = reinterpret_cast<std::uint16_t*>(lane_bytes + y_offset_);
  o.workspace = lane_bytes + ws_offset_;
  return o;
}

std::optional<double> BusyGemmTimer::time(const Launch& launch, int reps) {
  std::vector<double> us;
  bool ok = true;
  for (int r = 0; r < std::max(reps, 1) && ok; ++r) {
    if (flush_bytes_ > 0) evict_l2_by_reading(stream_, flush_, flush_bytes_, sink_);
    start_.record(stream_);
    for (auto& s : extra_) s.wait(start_);
    // Step-major: every lane has its next GEMM queued before any lane's after it, so the
    // host's launch latency cannot starve a lane.
    for (int step = 0; step < kSteps && ok; ++step)
      for (int l = 0; l < lanes_ && ok; ++l) ok = launch(l, step, l == 0 ? stream_ : extra_[l - 1].ref());
    for (std::size_t i = 0; i < extra_.size(); ++i) {
      done_[i].record(extra_[i].ref());
      stream_.wait(done_[i]);
    }
    stop_.record(stream_);
    stop_.synchronize();
    us.push_back(elapsed(start_, stop_).count() * 1e3 / (lanes_ * kSteps));
  }
  if (!ok) return std::nullopt;
  return report::summarize(us).median;
}

}  // namespace streampipe::serving::detail
