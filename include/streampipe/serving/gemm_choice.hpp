// SPDX-License-Identifier: Apache-2.0
#pragma once
// The outcome of the MLP's per-shape GEMM algorithm search (see docs/batching.md): for
// one layer shape at one batch size, the configuration (cuBLASLt's, or streampipe's own
// Hopper kernel) that was fastest among the candidates timed, alone or with the batcher's
// lanes all busy, its time, and what the heuristic's first answer took. Host data only;
// MlpModel::gemm_choices() returns one per layer.

#include <cstddef>
#include <cstdint>
#include <string>

namespace streampipe::serving {

struct GemmChoice {
  // The problem: D (out x rows) = W (out x in) · X^T, bias (+ ReLU) in the epilogue.
  std::size_t in = 0, out = 0, rows = 0;
  bool relu = false;

  // Which kernel: "cuBLASLt", or "sm90" for streampipe's own Hopper kernel (then algo_id
  // is -1, `tile` is 128 features x the tile's batch rows, `reduction` says how the K
  // slices are summed: in a cluster's shared memory, and through a workspace).
  std::string kernel = "cuBLASLt";
  // The configuration (cuBLASLt's algorithm id and the names of its tile and stages).
  int algo_id = 0;
  std::string tile, stages;
  int split_k = 1;
  std::string reduction;  // how split-K partial sums are reduced: "none" or "fp32"
  // cuBLASLt's custom option (a kernel variant of the algorithm) and cluster shape
  // ("2x1", "auto"); "-" for the sm90 kernel.
  int custom_option = 0;
  std::string cluster = "auto";
  std::size_t workspace_bytes = 0;
  int heuristic_rank = -1;  // its place in the heuristic's answers; -1: a variant the search built

  // The lanes the search chose for: 1, the fastest GEMM alone; more, the least time per
  // GEMM with that many lanes busy at once (gemm_busy_timing.hpp), what a batcher with that
  // many lanes runs under full load.
  int lanes = 1;
  // Events around each GEMM alone, L2 flushed before it, pseudo-random bf16 data; with one
  // lane the median of 3 rounds (each the median of 10 runs), with more the first pass's
  // median of 5.
  double us = 0;            // one GEMM alone
  double busy_us = 0;       // per GEMM with `lanes` lanes busy, median of 3 rounds of 10; 0 with one lane
  double tflops = 0;        // 2·in·out·rows / the time chosen by (busy_us with lanes > 1, else us)
  double heuristic_us = 0;  // the heuristic's first answer, timed as the choice was
  // streampipe's sm_90a kernel where it was timed (compute capability 9.0), chosen or not:
  // its fastest configuration's time (alone or busy, as the choice) in the race against
  // cuBLASLt's choice (0: not timed)
  // and that configuration (Sm90Gemm::describe()).
  double sm90_us = 0;
  std::string sm90_config;
  int planned = 0;          // candidates planned
  int timed = 0;            // of those, accepted by cublasLtMatmulAlgoCheck and timed
  double search_ms = 0;     // host wall time of the whole search
  // Faster candidates dropped because their output disagreed with the heuristic's first
  // answer's beyond bf16 accuracy (expected 0; the chosen one always agrees).
  int disagreed = 0;

  [[nodiscard]] double flops() const noexcept {
    return 2.0 * static_cast<double>(in) * static_cast<double>(out) * static_cast<double>(rows);
  }
};

}  // namespace streampipe::serving
