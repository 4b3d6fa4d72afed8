// SPDX-License-Identifier: Apache-2.0
#pragma once
// serve-bench's compute-only figures: the MLP's forward pass at a fixed batch size, and its
// layers' GEMMs alone (chained as in the pass, the float <-> bf16 conversions left out),
// each replayed as a CUDA graph as the batcher's per-bucket plans run it, timed with events
// after warm-up, as TFLOP/s to hold against the bf16 GEMM peak; the GEMMs also with the
// batcher's lanes all busy at once (MlpModel::time_layers_busy), as a saturated batcher runs
// them. The outputs of the timed forward passes are checked against the CPU reference. Also
// the configurations the model's algorithm search chose for its GEMMs.

#if defined(STREAMPIPE_HAVE_CUBLAS)
#include "serve_bench_load.hpp"

#include "streampipe/serving/mlp_model.hpp"
#include "streampipe/report/statistics.hpp"

#include <nlohmann/json.hpp>

#include <string>

namespace streampipe::cli::serve {

struct MlpRate {
  std::size_t rows = 0;
  report::Summary tflops;       // forward passes (10 per run), conversions included
  report::Summary gemm_tflops;  // the GEMMs of one pass, chained, per pass
  std::size_t lanes = 1;             // lanes of the busy figure
  report::Summary busy_gemm_tflops;  // the same with `lanes` lanes busy (configurations chosen for that)
  report::Summary busy_alone_plan_tflops;  // `lanes` lanes busy with the configurations chosen alone
  bool verified = false;  // every row of the last run matched the reference
  double worst_error = 0;
};

[[nodiscard]] MlpRate measure_mlp_rate(const Device& device, serving::MlpModel& model, const InputPool& pool,
                                       std::size_t rows, std::size_t lanes, int runs);

// The GEMM configurations the model's search chose, for every batch size and lane count a
// lane prepared (the batcher's buckets and the rates measured above), layers of one shape
// and epilogue on one row: time per GEMM alone and with the lanes busy, TFLOP/s and % of
// `peak_tflops` by the time the choice minimized, and the heuristic's first answer timed
// the same way.
[[nodiscard]] std::string gemm_choice_table(const serving::MlpModel& model, double peak_tflops);
[[nodiscard]] nlohmann::json gemm_choices_json(const serving::MlpModel& model, double peak_tflops);

}  // namespace streampipe::cli::serve
#endif
