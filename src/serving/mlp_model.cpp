// SPDX-License-Identifier: Apache-2.0
#include "streampipe/serving/mlp_model.hpp"

#include "cublaslt_handles.hpp"
#include "gemm_algorithm_search.hpp"
#include "mlp_convert.cuh"
#include "streampipe/cuda/device_buffer.hpp"
#include "streampipe/cuda/error.hpp"
#include "streampipe/cuda/event.hpp"
#include "streampipe/cuda/graph.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <optional>
#include <stdexcept>

namespace streampipe::serving {

struct MlpModel::State {
  int device = 0;
  std::vector<std::size_t> sizes;  // input, hidden..., output
  std::vector<DeviceBuffer<std::uint16_t>> weights, biases;
  // Lanes see the state as const; the search results are the one thing they add to it.
  mutable detail::GemmSearchCache searches;
};

namespace {

// One layer's GEMM for one batch size. In cuBLAS's column-major terms the row-major
// activations X (rows × in) are an in × rows matrix, and W (out × in, row-major) an
// in × out matrix used transposed: Y^T (out × rows) = W · X^T is D = A^T · B with
// m = out, n = rows, k = in.
struct LayerPlan {
  detail::MatrixLayout b, d;
  cublasLtMatmulAlgo_t algo{};
};

class MlpLane final : public ModelLane {
 public:
  MlpLane(std::shared_ptr<const MlpModel::State> state, StreamRef stream, std::size_t max_rows,
          MlpModel::GemmPlans plans = MlpModel::GemmPlans::searched)
      : state_(std::move(state)),
        stream_(stream),
        max_rows_(max_rows),
        gemm_plans_(plans),
        handle_(detail::make_handle()),
        workspace_(Device(state_->device), detail::kWorkspaceBytes) {
    const std::size_t widest = *std::max_element(state_->sizes.begin(), state_->sizes.end());
    for (auto& a : activations_) a = DeviceBuffer<std::uint16_t>(Device(state_->device), max_rows * widest);
    const std::size_t layers = state_->sizes.size() - 1;
    for (std::size_t i = 0; i < layers; ++i) {
      auto desc = detail::make_tn_desc();
      const cublasLtEpilogue_t epilogue = i + 1 < layers ? CUBLASLT_EPILOGUE_RELU_BIAS : CUBLASLT_EPILOGUE_BIAS;
      SP_CUBLAS_CHECK(detail::lt().matmul_desc_set_attribute(desc.get(), CUBLASLT_MATMUL_DESC_EPILOGUE, &epilogue,
                                                     sizeof(epilogue)));
      const void* bias = state_->biases[i].data();
      SP_CUBLAS_CHECK(detail::lt().matmul_desc_set_attribute(desc.get(), CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias,
                                                     sizeof(bias)));
      // The bias type defaults to D's (bf16), which is how the biases are stored.
      descs_.push_back(std::move(desc));
      const auto in = static_cast<std::uint64_t>(state_->sizes[i]), out = static_cast<std::uint64_t>(state_->sizes[i + 1]);
      a_layouts_.push_back(detail::make_layout(in, out, static_cast<std::int64_t>(in)));
    }
  }

  // Each layer's algorithm comes from the model-wide search cache: the first lane to need a
  // (shape, rows, epilogue) times the candidates (gemm_algorithm_search.hpp), every other
  // layer and lane of that shape reuses the result. The search runs on its own stream and
  // never on this lane's, so prepare() may be called while the lane's stream is captured.
  // A lane made for the heuristic's first answers (MlpModel::time_layers) searches nothing.
  void prepare(std::size_t rows) override {
    if (rows == 0 || rows > max_rows_)
      throw std::invalid_argument(fmt::format("MLP lane: {} rows outside [1, {}]", rows, max_rows_));
    if (plans_.contains(rows)) return;
    const Device device(state_->device);
    const CurrentDeviceGuard guard(device);
    // Also covers cuBLASLt's host-side queries (heuristic, AlgoCheck) inside a capture.
    const detail::RelaxedCaptureMode relaxed;
    std::vector<LayerPlan> plans;
    const std::size_t layers = state_->sizes.size() - 1;
    for (std::size_t i = 0; i < layers; ++i) {
      const std::size_t in = state_->sizes[i], out = state_->sizes[i + 1];
      LayerPlan p{detail::make_layout(in, rows, static_cast<std::int64_t>(in)),
                  detail::make_layout(out, rows, static_cast<std::int64_t>(out)), {}};
      const bool relu = i + 1 < layers;
      const detail::GemmProblem problem{descs_[i].get(), a_layouts_[i].get(), p.b.get(), p.d.get(),
                                        state_->weights[i].data(), in, out, rows, relu};
      std::optional<cublasLtMatmulAlgo_t> algo;
      if (gemm_plans_ == MlpModel::GemmPlans::searched) {
        const auto found = state_->searches.find_or_search({in, out, rows, relu}, [&] {
          return detail::search_gemm(device, handle_.get(), problem, workspace_.bytes());
        });
        // A shared result was checked against another layer's descriptors (its bias
        // pointer): check it against this one's too (a host call, safe inside a capture).
        if (detail::algo_accepted(handle_.get(), problem, found.algo, workspace_.bytes())) algo = found.algo;
      }
      if (!algo) algo = detail::heuristic_first(handle_.get(), problem, workspace_.bytes());
      if (!algo)
        throw std::runtime_error(fmt::format("cuBLASLt has no bf16 algorithm for layer {} ({} -> {}) at {} rows", i,
                                             in, out, rows));
      p.algo = *algo;
      plans.push_back(std::move(p));
    }
    plans_.emplace(rows, std::move(plans));
  }

  void enqueue(const float* d_in, float* d_out, std::size_t rows) override {
    const auto& sizes = state_->sizes;
    detail::float_to_bf16(stream_, d_in, activations_[0].data(), rows * sizes.front());
    const std::size_t last = enqueue_layers(rows);
    detail::bf16_to_float(stream_, activations_[last].data(), d_out, rows * sizes.back());
  }

  void enqueue_rows(const float* const* in_rows, float* const* out_rows, std::size_t rows) override {
    const auto& sizes = state_->sizes;
    detail::rows_to_bf16(stream_, in_rows, activations_[0].data(), rows, sizes.front());
    const std::size_t last = enqueue_layers(rows);
    detail::bf16_to_rows(stream_, activations_[last].data(), out_rows, rows, sizes.back());
  }

  // See MlpModel::time_layers. The layers are captured once into a graph, as the batcher's
  // per-bucket plans run them; every pass of a run is enqueued before the run is waited
  // for, so the host stays ahead of the GPU after the first, which is not counted.
  std::vector<double> time_layers(std::size_t rows, int runs) {
    constexpr int kPasses = 10;
    const Device device(state_->device);
    GraphExec layers = capture_layers(rows);
    std::vector<Event> marks;
    for (int i = 0; i < 2 * kPasses; ++i) marks.emplace_back(device);
    std::vector<double> us;
    for (int r = 0; r < runs; ++r) {
      for (int pass = 0; pass < kPasses; ++pass) {
        fill_input(rows, static_cast<unsigned>(7 + pass));
        marks[static_cast<std::size_t>(2 * pass)].record(stream_);
        layers.launch(stream_);
        marks[static_cast<std::size_t>(2 * pass + 1)].record(stream_);
      }
      marks.back().synchronize();
      for (int pass = 1; pass < kPasses; ++pass)
        us.push_back(elapsed(marks[static_cast<std::size_t>(2 * pass)], marks[static_cast<std::size_t>(2 * pass + 1)])
                         .count() *
                     1e3);
    }
    return us;
  }

  // The layers' GEMMs alone as a graph (they read activations_[0]).
  GraphExec capture_layers(std::size_t rows) {
    GraphCapture capture(stream_);
    (void)enqueue_layers(rows);
    return GraphExec(capture.end());
  }

  // A fresh pseudo-random first activation, as a batch's input conversion writes it.
  void fill_input(std::size_t rows, unsigned seed) {
    detail::fill_bf16_pattern(stream_, activations_[0].data(), rows * state_->sizes.front(), 1.0f, seed);
  }

 private:
  // The layers' GEMMs, from activations_[0]; returns the index of the activation buffer
  // holding the output (they ping-pong).
  std::size_t enqueue_layers(std::size_t rows) {
    const auto it = plans_.find(rows);
    if (it == plans_.end()) throw std::logic_error(fmt::format("MLP lane: no plan prepared for {} rows", rows));
    std::size_t cur = 0;
    const float alpha = 1.0f, beta = 0.0f;
    for (std::size_t i = 0; i < it->second.size(); ++i) {
      const LayerPlan& p = it->second[i];
      std::uint16_t* y = activations_[1 - cur].data();
      SP_CUBLAS_CHECK(detail::lt().matmul(handle_.get(), descs_[i].get(), &alpha, state_->weights[i].data(),
                                     a_layouts_[i].get(), activations_[cur].data(), p.b.get(), &beta, y, p.d.get(), y,
                                     p.d.get(), &p.algo, workspace_.data(), workspace_.bytes(), stream_.handle()));
      cur = 1 - cur;
    }
    return cur;
  }

  std::shared_ptr<const MlpModel::State> state_;
  StreamRef stream_;
  std::size_t max_rows_;
  MlpModel::GemmPlans gemm_plans_;
  detail::LtHandle handle_;
  DeviceBuffer<std::byte> workspace_;
  DeviceBuffer<std::uint16_t> activations_[2];
  std::vector<detail::MatmulDesc> descs_;
  std::vector<detail::MatrixLayout> a_layouts_;
  std::map<std::size_t, std::vector<LayerPlan>> plans_;
};

}  // namespace

MlpModel::MlpModel(const Device& device, const MlpWeights& weights) : state_(std::make_shared<State>()) {
  if (weights.layers.empty()) throw std::invalid_argument("MlpModel: no layers");
  state_->device = device.index();
  state_->sizes.push_back(weights.input_size());
  for (const auto& l : weights.layers) state_->sizes.push_back(l.out);
  for (const std::size_t s : state_->sizes)
    if (s % 8 != 0)
      throw std::invalid_argument(fmt::format("MlpModel: layer size {} is not a multiple of 8 (bf16 tensor-core "
                                              "GEMMs need 16-byte rows)", s));
  const CurrentDeviceGuard guard(device);
  for (const auto& l : weights.layers) {
    DeviceBuffer<std::uint16_t> w(device, l.weights.size()), b(device, l.bias.size());
    SP_CUDA_CHECK(cudaMemcpy(w.data(), l.weights.data(), w.bytes(), cudaMemcpyHostToDevice));
    SP_CUDA_CHECK(cudaMemcpy(b.data(), l.bias.data(), b.bytes(), cudaMemcpyHostToDevice));
    state_->weights.push_back(std::move(w));
    state_->biases.push_back(std::move(b));
  }
  flops_per_row_ = weights.flops_per_row();
}

MlpModel::~MlpModel() = default;

std::size_t MlpModel::input_size() const { return state_->sizes.front(); }
std::size_t MlpModel::output_size() const { return state_->sizes.back(); }

std::vector<GemmChoice> MlpModel::gemm_choices(std::size_t rows) const {
  std::vector<GemmChoice> choices;
  const std::size_t layers = state_->sizes.size() - 1;
  for (std::size_t i = 0; i < layers; ++i) {
    const auto found = state_->searches.find({state_->sizes[i], state_->sizes[i + 1], rows, i + 1 < layers});
    if (!found) return {};
    choices.push_back(found->choice);
  }
  return choices;
}

std::vector<std::size_t> MlpModel::gemm_rows() const {
  std::vector<std::size_t> rows;
  for (const std::size_t r : state_->searches.rows())
    if (!gemm_choices(r).empty()) rows.push_back(r);
  return rows;
}

std::size_t MlpModel::gemm_searches() const { return state_->searches.searches(); }

std::vector<double> MlpModel::time_layers(StreamRef stream, std::size_t rows, int runs, GemmPlans plans) {
  if (stream.device_index() != state_->device)
    throw std::invalid_argument(fmt::format("MlpModel: weights live on GPU {}, the stream on GPU {}", state_->device,
                                            stream.device_index()));
  const CurrentDeviceGuard guard(stream.device());
  MlpLane lane(state_, stream, rows, plans);
  lane.prepare(rows);
  return lane.time_layers(rows, std::max(runs, 1));
}

std::unique_ptr<ModelLane> MlpModel::make_lane(StreamRef stream, std::size_t max_rows) {
  if (stream.device_index() != state_->device)
    throw std::invalid_argument(fmt::format("MlpModel: weights live on GPU {}, the lane's stream on GPU {}",
                                            state_->device, stream.device_index()));
  if (max_rows == 0) throw std::invalid_argument("MlpModel: a lane needs room for at least one row");
  const CurrentDeviceGuard guard(stream.device());
  return std::make_unique<MlpLane>(state_, stream, max_rows);
}

}  // namespace streampipe::serving
