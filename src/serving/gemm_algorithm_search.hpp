// SPDX-License-Identifier: Apache-2.0
#pragma once
// Internal: the per-shape cuBLASLt algorithm search for the MLP's bf16 GEMMs, and the
// model-wide cache of its results.
//
// search_gemm() asks the heuristic for its answers, plans candidates from them
// (gemm_candidates.hpp), keeps those cublasLtMatmulAlgoCheck accepts for this problem
// (epilogue and bias included) within the workspace, and times each with events on
// pseudo-random bf16 data, each run alone after the L2 cache is overwritten: after warm-up,
// 3 interleaved rounds of 5 runs per candidate, the median of the 15. The heuristic's first
// answer stays unless a candidate beats it by at least kGemmSearchMinGain (gemm_choice.hpp)
// and its output agrees with that answer's within bf16 accuracy.
//
// Capture: the search never touches the caller's stream. It runs on its own stream, with
// its own stream-ordered scratch, and sets the calling thread's capture mode to relaxed
// while it runs, so it may be called while the caller's stream is being captured into a
// graph (MlpLane::prepare() inside a capture): its synchronizations are of its own stream
// and events only, which are never part of the capture.

#include "cublaslt_handles.hpp"
#include "gemm_candidates.hpp"
#include "streampipe/serving/gemm_choice.hpp"
#include "streampipe/cuda/device.hpp"

#include <cuda_runtime_api.h>

#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <vector>

namespace streampipe::serving::detail {

// Sets the calling thread's stream-capture mode to relaxed for its lifetime: the thread
// may then allocate, launch and synchronize on streams that are not being captured even
// while one of its streams (or, in global mode, any stream) is. Restores the previous mode.
class RelaxedCaptureMode {
 public:
  RelaxedCaptureMode();
  ~RelaxedCaptureMode();
  RelaxedCaptureMode(const RelaxedCaptureMode&) = delete;
  RelaxedCaptureMode& operator=(const RelaxedCaptureMode&) = delete;

 private:
  cudaStreamCaptureMode previous_ = cudaStreamCaptureModeRelaxed;
};

// D (out x rows) = A^T · B in cuBLASLt's column-major terms (see mlp_model.cpp), bf16.
struct GemmProblem {
  cublasLtMatmulDesc_t desc = nullptr;  // make_tn_desc() with the epilogue and bias set
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, d = nullptr;
  const std::uint16_t* weights = nullptr;  // A: in x out, device memory
  std::size_t in = 0, out = 0, rows = 0;
  bool relu = false;  // the epilogue is RELU_BIAS (else BIAS): reported, not applied here
};

struct BuiltCandidate {
  Candidate plan;
  cublasLtMatmulAlgo_t algo{};
  std::size_t workspace_bytes = 0;
};

// The planned candidates that cuBLASLt accepts for `problem` within `workspace_bytes`,
// in plan order (the heuristic's first answer first). Host calls only: no stream, no
// synchronization.
[[nodiscard]] std::vector<BuiltCandidate> build_candidates(cublasLtHandle_t handle, const GemmProblem& problem,
                                                           std::size_t workspace_bytes,
                                                           const CandidateLimits& limits = {});

// True when cuBLASLt accepts `algo` for `problem` within `workspace_bytes`.
[[nodiscard]] bool algo_accepted(cublasLtHandle_t handle, const GemmProblem& problem, const cublasLtMatmulAlgo_t& algo,
                                 std::size_t workspace_bytes);

// cuBLASLt's first heuristic answer for `problem` that accumulates in fp32 (the search's
// reference, and the fallback when a shared result is not accepted for one lane's
// descriptors); nullopt when it has none.
[[nodiscard]] std::optional<cublasLtMatmulAlgo_t> heuristic_first(cublasLtHandle_t handle, const GemmProblem& problem,
                                                                   std::size_t workspace_bytes);

// The configuration an algorithm descriptor carries.
[[nodiscard]] AlgoConfig read_config(const cublasLtMatmulAlgo_t& algo);

struct GemmSearchResult {
  cublasLtMatmulAlgo_t algo{};
  GemmChoice choice;
};

// Times the candidates on `device` as described above. Throws std::runtime_error when
// cuBLASLt has no usable algorithm for the problem.
[[nodiscard]] GemmSearchResult search_gemm(const Device& device, cublasLtHandle_t handle, const GemmProblem& problem,
                                           std::size_t workspace_bytes, const CandidateLimits& limits = {});

// One search per (in, out, rows, relu) for the whole model: layers of the same shape and
// every lane share it. Searches are serialized (timing two at once would time each
// other's interference); a failed search caches nothing and rethrows.
class GemmSearchCache {
 public:
  struct Key {
    std::size_t in = 0, out = 0, rows = 0;
    bool relu = false;
    friend auto operator<=>(const Key&, const Key&) = default;
  };

  [[nodiscard]] GemmSearchResult find_or_search(const Key& key, const std::function<GemmSearchResult()>& search);
  [[nodiscard]] std::optional<GemmSearchResult> find(const Key& key) const;
  [[nodiscard]] std::size_t searches() const;
  // The distinct batch sizes searched, ascending.
  [[nodiscard]] std::vector<std::size_t> rows() const;

 private:
  mutable std::mutex mutex_;
  std::map<Key, GemmSearchResult> results_;
  std::size_t searches_ = 0;
};

}  // namespace streampipe::serving::detail
