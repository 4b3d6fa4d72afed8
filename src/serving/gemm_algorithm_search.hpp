// SPDX-License-Identifier: Apache-2.0
#pragma once
// Internal: the per-shape cuBLASLt algorithm search for the MLP's bf16 GEMMs, and the
// model-wide cache of its results.
//
// search_gemm() asks the heuristic for up to 64 answers, plans candidates from them
// (gemm_candidates.hpp: the heuristic's first 16, split-K variants, smaller tiles, kernel
// options of the first tiles; at most 180), keeps those cublasLtMatmulAlgoCheck accepts
// for this problem (epilogue and bias included) within the workspace, times each with
// events on pseudo-random bf16 data, each run alone after the L2 cache is overwritten
// (warm-up, then the median of 5 runs each, then the 5 fastest and the heuristic's first
// answer again in 3 interleaved rounds of 10), and returns the fastest whose output agrees
// with the heuristic's first answer. With problem.lanes > 1 "fastest" means the least time
// per GEMM with that many lanes busy at once (gemm_busy_timing.hpp), measured for every
// candidate after its time alone, and the finalists and rounds use that time: under full
// load a configuration whose grid leaves SMs idle alone can be the fastest.
// Where this library's sm_90a kernel runs (a Hopper GPU, a shape it tiles, the bias
// given), its one-wave K splits are timed the same way, the fastest against cuBLASLt's
// choice in interleaved rounds, and it is chosen when it is faster and agrees.
//
// Capture: the search never touches the caller's stream. It runs on its own stream, with
// its own stream-ordered scratch, and sets the calling thread's capture mode to relaxed
// while it runs, so it may be called while the caller's stream is being captured into a
// graph (MlpLane::prepare() inside a capture): its synchronizations are of its own stream
// and events only, which are never part of the capture.

#include "cublaslt_handles.hpp"
#include "gemm_candidates.hpp"
#include "sm90_gemm.hpp"
#include "streampipe/serving/gemm_choice.hpp"
#include "streampipe/cuda/device.hpp"

#include <cuda_runtime_api.h>

#include <functional>
#include <optional>
#include <map>
#include <mutex>
#include <tuple>
#include <utility>
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
  // The bias the descriptor points to; when set, the search also times this library's
  // sm_90a kernel (sm90_gemm.hpp), which takes it as a pointer.
  const std::uint16_t* bias = nullptr;
  // How many of the batcher's lanes run this GEMM at once (its executor's lanes); the
  // search then minimizes the time per GEMM with all of them busy.
  int lanes = 1;
};

struct BuiltCandidate {
  Candidate plan;
  cublasLtMatmulAlgo_t algo{};
  std::size_t workspace_bytes = 0;
};

// The planned candidates that cuBLASLt accepts for `problem` within `workspace_bytes`,
// in plan order (the heuristic's first answer first). `planned` receives the plan's size.
// Host calls only: no stream, no synchronization.
[[nodiscard]] std::vector<BuiltCandidate> build_candidates(cublasLtHandle_t handle, const GemmProblem& problem,
                                                           std::size_t workspace_bytes,
                                                           const CandidateLimits& limits = {},
                                                           std::size_t* planned = nullptr);

// True when cuBLASLt accepts `algo` for `problem` within `workspace_bytes`.
[[nodiscard]] bool algo_accepted(cublasLtHandle_t handle, const GemmProblem& problem, const cublasLtMatmulAlgo_t& algo,
                                 std::size_t workspace_bytes);

// cuBLASLt's first heuristic answer for `problem` (the fallback when a shared result is
// not accepted for one lane's descriptors); nullopt when it has none.
[[nodiscard]] std::optional<cublasLtMatmulAlgo_t> heuristic_first(cublasLtHandle_t handle, const GemmProblem& problem,
                                                                   std::size_t workspace_bytes);

// The configuration an algorithm descriptor carries.
[[nodiscard]] AlgoConfig read_config(const cublasLtMatmulAlgo_t& algo);

struct GemmSearchResult {
  cublasLtMatmulAlgo_t algo{};  // cuBLASLt's configuration, unless sm90 is set
  std::optional<Sm90Split> sm90;  // the sm_90a kernel with this split won
  GemmChoice choice;
};

// Times the candidates on `device` as described above. Throws std::runtime_error when
// cuBLASLt has no usable algorithm for the problem.
[[nodiscard]] GemmSearchResult search_gemm(const Device& device, cublasLtHandle_t handle, const GemmProblem& problem,
                                           std::size_t workspace_bytes, const CandidateLimits& limits = {});

// One search per (in, out, rows, relu, lanes) for the whole model: layers of the same shape and
// every lane share it. Searches are serialized (timing two at once would time each
// other's interference); a failed search caches nothing and rethrows.
class GemmSearchCache {
 public:
  struct Key {
    std::size_t in = 0, out = 0, rows = 0;
    bool relu = false;
    int lanes = 1;
    friend auto operator<=>(const Key&, const Key&) = default;
  };

  [[nodiscard]] GemmSearchResult find_or_search(const Key& key, const std::function<GemmSearchResult()>& search);
  [[nodiscard]] std::optional<GemmSearchResult> find(const Key& key) const;
  [[nodiscard]] std::size_t searches() const;
  // The distinct (rows, lanes) searched, ascending.
  [[nodiscard]] std::vector<std::pair<std::size_t, int>> plans() const;

 private:
  mutable std::mutex mutex_;
  std::map<Key, GemmSearchResult> results_;
  std::size_t searches_ = 0;
};

}  // namespace streampipe::serving::detail
