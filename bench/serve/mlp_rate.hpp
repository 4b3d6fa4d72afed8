// SPDX-License-Identifier: Apache-2.0
#pragma once
// serve-bench's compute-only figures: the MLP's forward pass at a fixed batch size, and its
// layers' GEMMs alone (chained as in the pass, the float <-> bf16 conversions left out),
// each replayed as a CUDA graph as the batcher's per-bucket plans run it, timed with events
// after warm-up, as TFLOP/s; the GEMMs once with the configurations the algorithm search
// chose and once with cuBLASLt's heuristic's first answers, in alternating runs, so the
// search's gain is measured where it counts. The outputs of the timed forward passes are
// checked against the CPU reference. Also the configurations the search chose.

#if defined(STREAMPIPE_HAVE_CUBLAS)
#include "harness/measure.hpp"
#include "serve/load.hpp"

#include "streampipe/serving/mlp_model.hpp"
#include "streampipe/report/statistics.hpp"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace streampipe::bench::serve {

struct MlpRate {
  std::size_t rows = 0;
  std::vector<double> forward_tflops;     // each run's forward passes (10 per run), conversions included
  report::Summary tflops;                 // their summary
  report::Summary gemm_tflops;            // the GEMMs of one pass, chained, per pass: the search's choices
  report::Summary heuristic_gemm_tflops;  // the same with the heuristic's first answers
  bool verified = false;  // every row of the last run matched the reference
  double worst_error = 0;
  [[nodiscard]] double gain() const noexcept {
    return heuristic_gemm_tflops.median > 0 ? gemm_tflops.median / heuristic_gemm_tflops.median : 0.0;
  }
};

[[nodiscard]] MlpRate measure_mlp_rate(const Device& device, serving::MlpModel& model, const InputPool& pool,
                                       std::size_t rows, int runs);

// The GEMM configurations the model's search chose, for every batch size a lane prepared
// (the batcher's buckets and the rates measured above), layers of one shape and epilogue on
// one row: the configuration, its place in the heuristic's answers, its time per GEMM alone
// and the heuristic's first answer's, timed the same way.
[[nodiscard]] std::string gemm_choice_table(const serving::MlpModel& model);
[[nodiscard]] nlohmann::json gemm_choices_json(const serving::MlpModel& model);

}  // namespace streampipe::bench::serve
#endif
