// SPDX-License-Identifier: Apache-2.0
#pragma once
// The outcome of the MLP's per-shape GEMM algorithm search (docs/batching.md): for one
// layer shape at one batch size, the cuBLASLt configuration the search chose, its time and
// the time of the heuristic's first answer, timed the same way. Host data only;
// MlpModel::gemm_choices() returns one per layer.

#include <cstddef>
#include <string>

namespace streampipe::serving {

// The search keeps the heuristic's first answer unless a candidate is at least this much
// faster (time ratio - 1): smaller differences, timed alone, do not carry over to the
// layers chained as a batch runs them (docs/batching.md).
inline constexpr double kGemmSearchMinGain = 0.03;

struct GemmChoice {
  // The problem: D (out x rows) = W (out x in) · X^T, bias (+ ReLU) in the epilogue.
  std::size_t in = 0, out = 0, rows = 0;
  bool relu = false;

  // The configuration: cuBLASLt's algorithm id, the names of its tile and stages, its K
  // split (partial sums always reduced in fp32), custom option (a kernel variant of the
  // algorithm) and cluster shape ("1x2", "auto").
  int algo_id = 0;
  std::string tile, stages;
  int split_k = 1;
  int custom_option = 0;
  std::string cluster = "auto";
  std::size_t workspace_bytes = 0;
  // Its place in the heuristic's answers: 0 is cuBLASLt's own first choice; -1 a variant
  // the search built from one of them (K unsplit, another kernel option).
  int heuristic_rank = -1;

  // Microseconds of one GEMM alone: events around it, L2 evicted before it, pseudo-random
  // bf16 data, the median of 3 interleaved rounds of 5 runs.
  double us = 0;
  double heuristic_us = 0;  // the heuristic's first answer, timed the same way
  int candidates = 0;       // configurations timed
  // Faster candidates passed over because their output disagreed with the heuristic's
  // first answer's beyond bf16 accuracy (expected 0).
  int disagreed = 0;
  double search_ms = 0;     // host wall time of the whole search

  [[nodiscard]] double flops() const noexcept {
    return 2.0 * static_cast<double>(in) * static_cast<double>(out) * static_cast<double>(rows);
  }
  [[nodiscard]] double tflops() const noexcept { return us > 0 ? flops() / (us * 1e-6) / 1e12 : 0.0; }
  // How much faster than the heuristic's first answer (1: it is that answer, or no faster).
  [[nodiscard]] double gain() const noexcept { return us > 0 ? heuristic_us / us : 0.0; }
};

}  // namespace streampipe::serving
