// SPDX-License-Identifier: Apache-2.0
#pragma once
// A BatchExecutor on host threads: each lane owns packed input/output buffers of the
// largest bucket and calls a host model on them. It makes the batcher's logic testable
// and usable without a GPU, and counts plan uses per bucket so tests can check that every
// plan's first use happened in prepare() (warm-up).

#include "streampipe/serving/executor.hpp"

#include <array>
#include <atomic>
#include <cstddef>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <vector>

namespace streampipe::serving {

// Computes `rows` rows: in is rows × input_size, out is rows × output_size (row-major).
using HostModel = std::function<void(std::span<const float> in, std::span<float> out, std::size_t rows)>;

class HostExecutor final : public BatchExecutor {
 public:
  HostExecutor(std::size_t input_size, std::size_t output_size, std::size_t lanes, HostModel model);

  [[nodiscard]] std::size_t lanes() const override { return lanes_.size(); }
  [[nodiscard]] std::size_t input_size() const override { return input_size_; }
  [[nodiscard]] std::size_t output_size() const override { return output_size_; }
  [[nodiscard]] std::string device_name() const override { return "host"; }
  [[nodiscard]] report::SyncMode sync_mode() const override { return report::SyncMode::blocking; }
  void prepare(std::span<const std::size_t> buckets) override;
  // The host model runs inside launch(), which also writes the outputs; finish() hands
  // back the timing.
  void launch(std::size_t lane, std::size_t slot, const Batch& batch) override;
  void wait(std::size_t, std::size_t) noexcept override {}
  BatchTiming finish(std::size_t lane, std::size_t slot, const Batch& batch) override;

  // Uses of each bucket's plan: in prepare() and in run(), all lanes together.
  [[nodiscard]] std::map<std::size_t, std::size_t> warmup_uses() const;
  [[nodiscard]] std::map<std::size_t, std::size_t> run_uses() const;
  // The largest number of launch() calls that were in progress at once.
  [[nodiscard]] std::size_t max_concurrent_runs() const noexcept { return max_concurrent_.load(); }

 private:
  struct LaneBuffers {
    std::vector<float> in, out;
    std::array<std::optional<BatchTiming>, kSlotsPerLane> launched;
  };
  std::size_t input_size_, output_size_;
  HostModel model_;
  std::vector<LaneBuffers> lanes_;
  std::vector<std::size_t> buckets_;
  mutable std::mutex mu_;
  std::map<std::size_t, std::size_t> warmup_uses_, run_uses_;
  std::atomic<std::size_t> running_{0}, max_concurrent_{0};
};

}  // namespace streampipe::serving
