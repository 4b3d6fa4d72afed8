// SPDX-License-Identifier: Apache-2.0
#include "gemm_algorithm_search.hpp"

#include "l2_eviction.cuh"
#include "mlp_convert.cuh"
#include "streampipe/serving/mlp_reference.hpp"
#include "streampipe/cuda/device_buffer.hpp"
#include "streampipe/cuda/error.hpp"
#include "streampipe/cuda/event.hpp"
#include "streampipe/cuda/stream.hpp"
#include "streampipe/report/statistics.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <optional>
#include <stdexcept>

namespace streampipe::serving::detail {

static_assert(kReductionNone == CUBLASLT_REDUCTION_SCHEME_NONE &&
              kReductionInplace == CUBLASLT_REDUCTION_SCHEME_INPLACE &&
              kReductionComputeType == CUBLASLT_REDUCTION_SCHEME_COMPUTE_TYPE &&
              kReductionOutputType == CUBLASLT_REDUCTION_SCHEME_OUTPUT_TYPE);
static_assert(kClusterAuto == CUBLASLT_CLUSTER_SHAPE_AUTO && kCluster1x1 == CUBLASLT_CLUSTER_SHAPE_1x1x1 &&
              kCluster2x1 == CUBLASLT_CLUSTER_SHAPE_2x1x1 && kCluster1x2 == CUBLASLT_CLUSTER_SHAPE_1x2x1);

namespace {

constexpr cublasComputeType_t kCompute = CUBLAS_COMPUTE_32F;
constexpr cudaDataType_t kScale = CUDA_R_32F, kData = CUDA_R_16BF;
// More than CandidateLimits::heuristic_answers: some answers reduce split-K sums in bf16.
constexpr int kHeuristicAnswers = 16;
constexpr int kRounds = 3, kReps = 5;  // interleaved rounds, runs per candidate and round
constexpr int kWarmupSpans = 20;       // of kReps runs: some milliseconds before anything counts
constexpr std::size_t kAlignment = 256;  // cuBLASLt's default minimum alignment of A, B, C, D

template <typename T>
T get_config(const cublasLtMatmulAlgo_t& algo, cublasLtMatmulAlgoConfigAttributes_t attr) {
  T v{};
  std::size_t written = 0;
  SP_CUBLAS_CHECK(lt().matmul_algo_config_get_attribute(&algo, attr, &v, sizeof(v), &written));
  return v;
}

template <typename T>
[[nodiscard]] bool set_config(cublasLtMatmulAlgo_t& algo, cublasLtMatmulAlgoConfigAttributes_t attr, T v) {
  return lt().matmul_algo_config_set_attribute(&algo, attr, &v, sizeof(v)) == CUBLAS_STATUS_SUCCESS;
}

// The custom options algorithm `id` has (0..max); 0 when cuBLASLt does not say.
std::uint32_t custom_option_max(cublasLtHandle_t handle, int id) {
  cublasLtMatmulAlgo_t algo{};
  if (lt().matmul_algo_init(handle, kCompute, kScale, kData, kData, kData, kData, id, &algo) != CUBLAS_STATUS_SUCCESS)
    return 0;
  std::int32_t max = 0;
  std::size_t written = 0;
  if (lt().matmul_algo_cap_get_attribute(&algo, CUBLASLT_ALGO_CAP_CUSTOM_OPTION_MAX, &max, sizeof(max), &written) !=
          CUBLAS_STATUS_SUCCESS ||
      max < 0)
    return 0;
  return static_cast<std::uint32_t>(max);
}

// A descriptor for `c` built from its id; false when cuBLASLt refuses an attribute.
bool make_algo(cublasLtHandle_t handle, const AlgoConfig& c, cublasLtMatmulAlgo_t& algo) {
  if (lt().matmul_algo_init(handle, kCompute, kScale, kData, kData, kData, kData, c.id, &algo) !=
      CUBLAS_STATUS_SUCCESS)
    return false;
  return set_config(algo, CUBLASLT_ALGO_CONFIG_TILE_ID, c.tile) &&
         set_config(algo, CUBLASLT_ALGO_CONFIG_STAGES_ID, c.stages) &&
         set_config(algo, CUBLASLT_ALGO_CONFIG_SPLITK_NUM, static_cast<std::int32_t>(c.split_k)) &&
         set_config(algo, CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME, c.reduction) &&
         set_config(algo, CUBLASLT_ALGO_CONFIG_CTA_SWIZZLING, c.swizzle) &&
         set_config(algo, CUBLASLT_ALGO_CONFIG_CUSTOM_OPTION, c.custom) &&
         set_config(algo, CUBLASLT_ALGO_CONFIG_INNER_SHAPE_ID, c.inner_shape) &&
         set_config(algo, CUBLASLT_ALGO_CONFIG_CLUSTER_SHAPE_ID, c.cluster_shape);
}

std::vector<cublasLtMatmulHeuristicResult_t> heuristic(cublasLtHandle_t handle, const GemmProblem& p,
                                                       std::size_t workspace_bytes, int answers) {
  const auto pref = make_preference(workspace_bytes);
  std::vector<cublasLtMatmulHeuristicResult_t> results(static_cast<std::size_t>(answers));
  int found = 0;
  SP_CUBLAS_CHECK(lt().matmul_algo_get_heuristic(handle, p.desc, p.a, p.b, p.d, p.d, pref.get(), answers,
                                                 results.data(), &found));
  results.resize(static_cast<std::size_t>(std::clamp(found, 0, answers)));
  std::erase_if(results, [](const auto& r) { return r.state != CUBLAS_STATUS_SUCCESS; });
  return results;
}

constexpr std::size_t aligned(std::size_t bytes) { return (bytes + kAlignment - 1) / kAlignment * kAlignment; }

std::vector<float> to_floats(const std::vector<std::uint16_t>& bf16) {
  std::vector<float> f(bf16.size());
  std::transform(bf16.begin(), bf16.end(), f.begin(), from_bf16);
  return f;
}

}  // namespace

RelaxedCaptureMode::RelaxedCaptureMode() { SP_CUDA_CHECK(cudaThreadExchangeStreamCaptureMode(&previous_)); }
RelaxedCaptureMode::~RelaxedCaptureMode() { SP_CUDA_CHECK_NOTHROW(cudaThreadExchangeStreamCaptureMode(&previous_)); }

AlgoConfig read_config(const cublasLtMatmulAlgo_t& algo) {
  AlgoConfig c;
  c.id = get_config<std::int32_t>(algo, CUBLASLT_ALGO_CONFIG_ID);
  c.tile = get_config<std::uint32_t>(algo, CUBLASLT_ALGO_CONFIG_TILE_ID);
  c.stages = get_config<std::uint32_t>(algo, CUBLASLT_ALGO_CONFIG_STAGES_ID);
  c.split_k = get_config<std::int32_t>(algo, CUBLASLT_ALGO_CONFIG_SPLITK_NUM);
  c.reduction = get_config<std::uint32_t>(algo, CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME);
  c.swizzle = get_config<std::uint32_t>(algo, CUBLASLT_ALGO_CONFIG_CTA_SWIZZLING);
  c.custom = get_config<std::uint32_t>(algo, CUBLASLT_ALGO_CONFIG_CUSTOM_OPTION);
  c.inner_shape = get_config<std::uint16_t>(algo, CUBLASLT_ALGO_CONFIG_INNER_SHAPE_ID);
  c.cluster_shape = get_config<std::uint16_t>(algo, CUBLASLT_ALGO_CONFIG_CLUSTER_SHAPE_ID);
  // Without split-K the scheme is irrelevant; normalized so equal configurations compare equal.
  if (c.split_k <= 1) {
    c.split_k = 1;
    c.reduction = kReductionNone;
  }
  return c;
}

bool algo_accepted(cublasLtHandle_t handle, const GemmProblem& p, const cublasLtMatmulAlgo_t& algo,
                   std::size_t workspace_bytes) {
  cublasLtMatmulHeuristicResult_t check{};
  return lt().matmul_algo_check(handle, p.desc, p.a, p.b, p.d, p.d, &algo, &check) == CUBLAS_STATUS_SUCCESS &&
         check.state == CUBLAS_STATUS_SUCCESS && check.workspaceSize <= workspace_bytes;
}

std::optional<cublasLtMatmulAlgo_t> heuristic_first(cublasLtHandle_t handle, const GemmProblem& problem,
                                                    std::size_t workspace_bytes) {
  for (const auto& r : heuristic(handle, problem, workspace_bytes, kHeuristicAnswers))
    if (accumulates_in_fp32(read_config(r.algo))) return r.algo;
  return std::nullopt;
}

std::vector<BuiltCandidate> build_candidates(cublasLtHandle_t handle, const GemmProblem& problem,
                                             std::size_t workspace_bytes, const CandidateLimits& limits) {
  const auto results = heuristic(handle, problem, workspace_bytes, kHeuristicAnswers);
  std::vector<AlgoConfig> configs;
  configs.reserve(results.size());
  for (const auto& r : results) configs.push_back(read_config(r.algo));
  const auto plan = plan_candidates(configs, [&](int id) { return custom_option_max(handle, id); }, limits);
  std::vector<BuiltCandidate> built;
  for (const Candidate& c : plan) {
    BuiltCandidate b{c, {}, 0};
    if (c.heuristic_rank >= 0)
      b.algo = results[static_cast<std::size_t>(c.heuristic_rank)].algo;
    else if (!make_algo(handle, c.config, b.algo))
      continue;
    // AlgoCheck holds the configuration against this problem: types, layouts, the epilogue
    // (bias, ReLU) and its bias type, and says how much workspace it needs.
    cublasLtMatmulHeuristicResult_t check{};
    if (lt().matmul_algo_check(handle, problem.desc, problem.a, problem.b, problem.d, problem.d, &b.algo, &check) !=
            CUBLAS_STATUS_SUCCESS ||
        check.state != CUBLAS_STATUS_SUCCESS || check.workspaceSize > workspace_bytes)
      continue;
    b.workspace_bytes = check.workspaceSize;
    built.push_back(b);
  }
  return built;
}

GemmSearchResult search_gemm(const Device& device, cublasLtHandle_t handle, const GemmProblem& problem,
                             std::size_t workspace_bytes, const CandidateLimits& limits) {
  const auto t0 = std::chrono::steady_clock::now();
  const CurrentDeviceGuard guard(device);
  const RelaxedCaptureMode relaxed;
  const auto built = build_candidates(handle, problem, workspace_bytes, limits);
  const auto fail = [&](const char* what) {
    return std::runtime_error(fmt::format("cuBLASLt {} for a {} -> {} layer at {} rows", what, problem.in, problem.out,
                                          problem.rows));
  };
  if (built.empty()) throw fail("has no usable bf16 algorithm");

  Stream stream(device);
  const StreamRef s = stream.ref();
  const std::size_t nx = problem.in * problem.rows, ny = problem.out * problem.rows;
  const std::size_t y_offset = aligned(nx * sizeof(std::uint16_t));
  const std::size_t ws_offset = y_offset + aligned(ny * sizeof(std::uint16_t));
  const std::size_t flush_offset = ws_offset + aligned(std::max<std::size_t>(workspace_bytes, 1));
  int l2_bytes = 0;
  SP_CUDA_CHECK(cudaDeviceGetAttribute(&l2_bytes, cudaDevAttrL2CacheSize, device.index()));
  const std::size_t flush_bytes = 2 * static_cast<std::size_t>(std::max(l2_bytes, 0)) / 16 * 16;
  // One allocation, with room to align its start: cuBLASLt's algorithms may assume
  // 256-byte aligned matrices and workspace.
  const std::size_t sink_offset = flush_offset + aligned(flush_bytes);
  StreamOrderedBuffer<std::byte> scratch(s, kAlignment + sink_offset + sizeof(unsigned));
  const auto base_address = reinterpret_cast<std::uintptr_t>(scratch.data());
  std::byte* base = scratch.data() + (aligned(base_address) - base_address);
  auto* x = reinterpret_cast<std::uint16_t*>(base);
  auto* y = reinterpret_cast<std::uint16_t*>(base + y_offset);
  std::byte* workspace = base + ws_offset;
  std::byte* flush = base + flush_offset;
  auto* sink = reinterpret_cast<unsigned*>(base + sink_offset);

  // Not zeros, nor one repeated value: tensor cores run measurably faster on those.
  fill_bf16_pattern(s, x, nx, 1.0f, 7u);

  const float alpha = 1.0f, beta = 0.0f;
  const auto gemm = [&](const cublasLtMatmulAlgo_t& algo) {
    const bool ok = lt().matmul(handle, problem.desc, &alpha, problem.weights, problem.a, x, problem.b, &beta, y,
                                   problem.d, y, problem.d, &algo, workspace, workspace_bytes,
                                   s.handle()) == CUBLAS_STATUS_SUCCESS;
    if (!ok) (void)cudaGetLastError();  // a refused launch must not surface in a later check
    return ok;
  };
  std::vector<Event> marks;
  for (int i = 0; i < 2 * kReps; ++i) marks.emplace_back(device);
  // Appends kReps timings of `algo` in microseconds, each run alone between its own pair of
  // events after twice the L2 cache has been read through (evicting everything, leaving no
  // dirty lines): in the MLP each layer's weights come from HBM (serve-bench's 4 x 32 MB
  // exceed the H100's 50 MB of L2), and timed back to back a memory-bound GEMM would read
  // them from L2 and favour the wrong configuration. False when cuBLASLt refuses a launch.
  const auto time_runs = [&](const cublasLtMatmulAlgo_t& algo, std::vector<double>& us) {
    bool ok = true;
    int r = 0;
    for (; r < kReps && ok; ++r) {
      if (flush_bytes > 0) evict_l2_by_reading(s, flush, flush_bytes, sink);
      marks[static_cast<std::size_t>(2 * r)].record(s);
      ok = gemm(algo);
      marks[static_cast<std::size_t>(2 * r + 1)].record(s);
    }
    marks[static_cast<std::size_t>(2 * r - 1)].synchronize();
    if (!ok) return false;
    for (std::size_t i = 0; i < static_cast<std::size_t>(kReps); ++i)
      us.push_back(elapsed(marks[2 * i], marks[2 * i + 1]).count() * 1e3);
    return true;
  };

  // Clocks ramp up under load: some milliseconds of work before anything is timed, so the
  // first candidates are not timed on an idling GPU.
  std::vector<double> discarded;
  for (int i = 0; i < kWarmupSpans; ++i)
    if (!time_runs(built.front().algo, discarded)) break;

  struct Timed {
    std::size_t index = 0;  // into built
    std::vector<double> samples;
    bool ok = true;
    double us = 0;
  };
  std::vector<Timed> timed;
  for (std::size_t i = 0; i < built.size(); ++i)
    // Two untimed runs: the kernel's module loads, and its caches fill, outside the timing.
    if (gemm(built[i].algo) && gemm(built[i].algo)) timed.push_back({i, {}, true, 0});
  // Interleaved rounds: a clock change during the search favours no candidate.
  for (int round = 0; round < kRounds; ++round)
    for (Timed& t : timed)
      if (t.ok) t.ok = time_runs(built[t.index].algo, t.samples);
  std::erase_if(timed, [](const Timed& t) { return !t.ok; });
  if (timed.empty()) throw fail("refused every algorithm");
  for (Timed& t : timed) t.us = report::summarize(t.samples).median;

  // The reference is the heuristic's first answer that ran (built keeps the plan's order).
  const Timed reference = timed.front();
  std::sort(timed.begin(), timed.end(), [](const Timed& a, const Timed& b) { return a.us < b.us; });

  // A faster configuration must compute what the reference computes (within bf16 rounding:
  // split-K sums in another order). Outputs are poisoned (NaN) first.
  const auto output_of = [&](const cublasLtMatmulAlgo_t& algo, std::vector<std::uint16_t>& host) {
    host.assign(ny, 0);
    SP_CUDA_CHECK(cudaMemsetAsync(y, 0xff, ny * sizeof(std::uint16_t), s.handle()));
    if (!gemm(algo)) return false;
    SP_CUDA_CHECK(cudaMemcpyAsync(host.data(), y, ny * sizeof(std::uint16_t), cudaMemcpyDeviceToHost, s.handle()));
    stream.synchronize();
    return true;
  };
  std::vector<std::uint16_t> want, got;
  if (!output_of(built[reference.index].algo, want)) throw fail("stopped running its first algorithm");
  const std::vector<float> want_f = to_floats(want);
  const Timed* chosen = &reference;
  int disagreed = 0;
  for (const Timed& t : timed) {
    if (t.index == reference.index || t.us * (1.0 + kGemmSearchMinGain) > reference.us) break;
    if (output_of(built[t.index].algo, got) && mlp_output_matches(to_floats(got), want_f, 0.03)) {
      chosen = &t;
      break;
    }
    ++disagreed;
  }
  stream.synchronize();  // the scratch is freed on return

  const BuiltCandidate& best = built[chosen->index];
  const AlgoConfig cfg = read_config(best.algo);
  GemmSearchResult result;
  result.algo = best.algo;
  GemmChoice& c = result.choice;
  c.in = problem.in;
  c.out = problem.out;
  c.rows = problem.rows;
  c.relu = problem.relu;
  c.algo_id = cfg.id;
  c.tile = tile_name(cfg.tile);
  c.stages = stages_name(cfg.stages);
  c.split_k = cfg.split_k;
  c.custom_option = static_cast<int>(cfg.custom);
  c.cluster = cluster_name(cfg.cluster_shape);
  c.workspace_bytes = best.workspace_bytes;
  c.heuristic_rank = best.plan.heuristic_rank;
  c.us = chosen->us;
  c.heuristic_us = reference.us;
  c.candidates = static_cast<int>(timed.size());
  c.disagreed = disagreed;
  c.search_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  return result;
}

GemmSearchResult GemmSearchCache::find_or_search(const Key& key, const std::function<GemmSearchResult()>& search) {
  const std::lock_guard lock(mutex_);
  if (const auto it = results_.find(key); it != results_.end()) return it->second;
  GemmSearchResult r = search();
  ++searches_;
  results_.emplace(key, r);
  return r;
}

std::optional<GemmSearchResult> GemmSearchCache::find(const Key& key) const {
  const std::lock_guard lock(mutex_);
  if (const auto it = results_.find(key); it != results_.end()) return it->second;
  return std::nullopt;
}

std::vector<std::size_t> GemmSearchCache::rows() const {
  const std::lock_guard lock(mutex_);
  std::vector<std::size_t> rows;
  for (const auto& entry : results_) rows.push_back(entry.first.rows);
  std::sort(rows.begin(), rows.end());
  rows.erase(std::unique(rows.begin(), rows.end()), rows.end());
  return rows;
}

std::size_t GemmSearchCache::searches() const {
  const std::lock_guard lock(mutex_);
  return searches_;
}

}  // namespace streampipe::serving::detail
