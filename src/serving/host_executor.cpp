// SPDX-License-Identifier: Apache-2.0
#include "streampipe/serving/host_executor.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <stdexcept>
#include <utility>

namespace streampipe::serving {

HostExecutor::HostExecutor(std::size_t input_size, std::size_t output_size, std::size_t lanes, HostModel model)
    : input_size_(input_size), output_size_(output_size), model_(std::move(model)), lanes_(lanes) {
  if (input_size == 0 || output_size == 0) throw std::invalid_argument("HostExecutor: sizes must be positive");
  if (lanes == 0) throw std::invalid_argument("HostExecutor: at least one lane");
  if (!model_) throw std::invalid_argument("HostExecutor: no model");
}

void HostExecutor::prepare(std::span<const std::size_t> buckets) {
  if (buckets.empty()) throw std::invalid_argument("HostExecutor::prepare: no buckets");
  buckets_.assign(buckets.begin(), buckets.end());
  const std::size_t largest = *std::max_element(buckets_.begin(), buckets_.end());
  for (auto& lane : lanes_) {
    lane.in.assign(largest * input_size_, 0.0f);
    lane.out.assign(largest * output_size_, 0.0f);
    for (const std::size_t b : buckets_) {
      model_(std::span<const float>(lane.in.data(), b * input_size_), std::span<float>(lane.out.data(), b * output_size_), b);
      std::lock_guard lock(mu_);
      ++warmup_uses_[b];
    }
  }
}

void HostExecutor::launch(std::size_t lane, std::size_t slot, const Batch& batch) {
  if (lane >= lanes_.size()) throw std::out_of_range(fmt::format("HostExecutor: no lane {}", lane));
  if (slot >= kSlotsPerLane) throw std::out_of_range(fmt::format("HostExecutor: no slot {}", slot));
  if (lanes_[lane].launched[slot]) throw std::logic_error(fmt::format("HostExecutor: slot {} of lane {} is busy", slot, lane));
  if (std::find(buckets_.begin(), buckets_.end(), batch.bucket) == buckets_.end())
    throw std::logic_error(fmt::format("HostExecutor: bucket {} has no prepared plan", batch.bucket));
  const std::size_t now_running = ++running_;
  std::size_t seen = max_concurrent_.load();
  while (now_running > seen && !max_concurrent_.compare_exchange_weak(seen, now_running)) {
  }
  struct Leave {
    std::atomic<std::size_t>& n;
    ~Leave() { --n; }
  } leave{running_};

  const auto t0 = std::chrono::steady_clock::now();
  auto& buffers = lanes_[lane];
  const std::span<float> in(buffers.in.data(), batch.bucket * input_size_);
  const std::span<float> out(buffers.out.data(), batch.bucket * output_size_);
  gather_inputs(batch, in, input_size_);
  std::fill(in.begin() + static_cast<std::ptrdiff_t>(batch.size() * input_size_), in.end(), 0.0f);
  model_(in, out, batch.bucket);
  scatter_outputs(out, batch, output_size_);
  {
    std::lock_guard lock(mu_);
    ++run_uses_[batch.bucket];
  }
  BatchTiming t;
  t.enqueue_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  buffers.launched[slot] = t;
}

BatchTiming HostExecutor::finish(std::size_t lane, std::size_t slot, const Batch&) {
  if (lane >= lanes_.size() || slot >= kSlotsPerLane || !lanes_[lane].launched[slot])
    throw std::logic_error(fmt::format("HostExecutor: nothing launched in slot {} of lane {}", slot, lane));
  return *std::exchange(lanes_[lane].launched[slot], std::nullopt);
}

std::map<std::size_t, std::size_t> HostExecutor::warmup_uses() const {
  std::lock_guard lock(mu_);
  return warmup_uses_;
}

std::map<std::size_t, std::size_t> HostExecutor::run_uses() const {
  std::lock_guard lock(mu_);
  return run_uses_;
}

}  // namespace streampipe::serving
