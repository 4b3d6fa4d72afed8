// SPDX-License-Identifier: Apache-2.0
#pragma once
// The MLP of mlp_reference.hpp on the GPU with cuBLASLt: bf16 weights and activations,
// fp32 accumulation, bias (+ ReLU on hidden layers) fused into each GEMM's epilogue.
// Requests are float rows; the lane converts them to bf16 on the device and the output
// back to float. Each lane has its own cuBLASLt handle, workspace and activations, and an
// algorithm chosen per batch size in prepare(), so enqueue() is capturable into a graph.
// The algorithm of each (layer shape, batch size) is found once per model by timing
// cuBLASLt's heuristic answers and their variants (docs/batching.md, "GEMM algorithms").
// Available when the build found cuBLASLt (STREAMPIPE_HAVE_CUBLAS).

#include "streampipe/serving/gemm_choice.hpp"
#include "streampipe/serving/gpu_executor.hpp"
#include "streampipe/serving/mlp_reference.hpp"
#include "streampipe/cuda/device.hpp"

#include <cstdint>
#include <memory>
#include <vector>

namespace streampipe::serving {

class MlpModel final : public DeviceModel {
 public:
  // Uploads the weights. Every layer size must be a multiple of 8 (16-byte rows for
  // tensor cores); std::invalid_argument names the first that is not.
  MlpModel(const Device& device, const MlpWeights& weights);
  ~MlpModel() override;
  MlpModel(const MlpModel&) = delete;
  MlpModel& operator=(const MlpModel&) = delete;

  [[nodiscard]] std::size_t input_size() const override;
  [[nodiscard]] std::size_t output_size() const override;
  [[nodiscard]] std::unique_ptr<ModelLane> make_lane(StreamRef stream, std::size_t max_rows) override;
  // The input is read once by a float -> bf16 kernel, the output written once by bf16 -> float.
  [[nodiscard]] bool accepts_mapped_io() const override { return true; }
  [[nodiscard]] double flops_per_row() const noexcept { return flops_per_row_; }
  // The GEMM configuration each layer uses for batches of `rows` rows, once a lane has
  // prepared `rows` (empty before).
  [[nodiscard]] std::vector<GemmChoice> gemm_choices(std::size_t rows) const;
  // The batch sizes gemm_choices() answers for, ascending.
  [[nodiscard]] std::vector<std::size_t> gemm_rows() const;
  // The layers' GEMMs alone, chained as a forward pass runs them (each reading the previous
  // one's output; the float <-> bf16 conversions left out) and replayed as one CUDA graph, as
  // the batcher's per-bucket plans run them, on a lane of this model prepared for `rows` on
  // `stream`: microseconds of one pass, events around each, a fresh pseudo-random input
  // written before each (outside the events). `runs` runs of 10 passes, the first pass of
  // each not counted. `plans`: the configurations the search chose, or the heuristic's
  // first answers (cuBLASLt's own choice, the search's yardstick). Synchronizes with `stream`.
  enum class GemmPlans { searched, heuristic_first };
  [[nodiscard]] std::vector<double> time_layers(StreamRef stream, std::size_t rows, int runs,
                                                GemmPlans plans = GemmPlans::searched);
  // Algorithm searches run so far (one per distinct layer shape, epilogue and batch size).
  [[nodiscard]] std::size_t gemm_searches() const;

  struct State;

 private:
  std::shared_ptr<State> state_;
  double flops_per_row_ = 0;
};

}  // namespace streampipe::serving
