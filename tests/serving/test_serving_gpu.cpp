// SPDX-License-Identifier: Apache-2.0
// The GPU executor and the cuBLASLt MLP, checked against the CPU reference on random data
// of odd batch sizes, with outputs poisoned before each run.

#include "streampipe/serving/batcher.hpp"
#include "streampipe/serving/gpu_executor.hpp"
#include "streampipe/serving/mlp_model.hpp"
#include "streampipe/serving/mlp_reference.hpp"
#include "streampipe/cuda/device_buffer.hpp"
#include "streampipe/cuda/error.hpp"
#include "streampipe/cuda/event.hpp"
#include "streampipe/cuda/pinned_buffer.hpp"
#include "streampipe/cuda/stream.hpp"
#include "streampipe/report/statistics.hpp"
#include "support/gpu.hpp"

#include "rotating_model.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <future>
#include <limits>
#include <random>
#include <thread>
#include <vector>

namespace streampipe::serving {
namespace {

constexpr float kPoison = std::numeric_limits<float>::quiet_NaN();

std::vector<float> random_row(std::size_t n, std::mt19937& rng) {
  std::uniform_real_distribution<float> d(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (auto& x : v) x = d(rng);
  return v;
}

void expect_matches_reference(const MlpWeights& w, const std::vector<float>& in, const std::vector<float>& got) {
  std::vector<float> want(w.output_size());
  mlp_reference(w, in, want);
  double worst = 0;
  EXPECT_TRUE(mlp_output_matches(got, want, 0.03, &worst)) << "worst error / allowance = " << worst;
}

// Drives the executor directly: every bucket, odd batch sizes, padding rows present, batch
// sizes rising and falling.
void run_direct(bool graphs, BatchIo io = BatchIo::copy) {
  const Device device(0);
  const auto weights = make_mlp_weights({40, 72, 56, 24}, 11);
  MlpModel model(device, weights);
  GpuExecutor exec(device, model, {2, graphs, report::SyncMode::spin, io});
  const std::vector<std::size_t> buckets = {1, 4, 8, 13 + 3};
  exec.prepare(buckets);
  std::mt19937 rng(3);
  for (const std::size_t rows : {1u, 3u, 5u, 8u, 11u, 16u, 2u, 13u, 6u}) {
    std::size_t bucket = 0;
    for (auto b : buckets)
      if (b >= rows) {
        bucket = b;
        break;
      }
    std::vector<std::vector<float>> ins, outs;
    Batch batch;
    batch.bucket = bucket;
    for (std::size_t r = 0; r < rows; ++r) {
      ins.push_back(random_row(weights.input_size(), rng));
      outs.emplace_back(weights.output_size(), kPoison);
    }
    for (std::size_t r = 0; r < rows; ++r) {
      batch.inputs.push_back(ins[r]);
      batch.outputs.push_back(outs[r]);
    }
    const BatchTiming t = exec.run(rows % 2, batch);
    ASSERT_TRUE(t.compute_ms && t.h2d_ms && t.d2h_ms);
    EXPECT_GT(*t.compute_ms, 0.0);
    EXPECT_GT(t.enqueue_ms, 0.0);
    for (std::size_t r = 0; r < rows; ++r) expect_matches_reference(weights, ins[r], outs[r]);
  }
}

TEST(BatchingGpu, MlpWithGraphsMatchesReference) {
  SP_REQUIRE_GPU();
  run_direct(true);
}

TEST(BatchingGpu, MlpWithoutGraphsMatchesReference) {
  SP_REQUIRE_GPU();
  run_direct(false);
}

TEST(BatchingGpu, MlpWithMappedIoMatchesReference) {
  SP_REQUIRE_GPU();
  run_direct(true, BatchIo::mapped);
  run_direct(false, BatchIo::mapped);
}

// Pinned rows are read and written in place by the model's kernels: their outputs are there
// once the batch has run (wait()), before finish() copies the other rows' outputs out of the
// staging. Pinned and pageable rows mix in one batch, with padding rows after them.
void pinned_rows_in_place(bool graphs) {
  const Device device(0);
  const auto weights = make_mlp_weights({40, 72, 56, 24}, 13);
  MlpModel model(device, weights);
  GpuExecutor exec(device, model, {1, graphs, report::SyncMode::spin, BatchIo::mapped});
  const std::vector<std::size_t> buckets = {8};
  exec.prepare(buckets);
  std::mt19937 rng(5);
  std::size_t slot = 0;
  for (const std::size_t rows : {7u, 3u, 8u, 1u}) {
    std::vector<std::vector<float>> ins, outs;
    std::vector<PinnedBuffer<float>> pinned_ins, pinned_outs;
    Batch batch;
    batch.bucket = 8;
    for (std::size_t r = 0; r < rows; ++r) {
      ins.push_back(random_row(weights.input_size(), rng));
      const bool pinned = (r + rows) % 2 == 0;
      batch.pinned.push_back(pinned);
      if (pinned) {
        pinned_ins.emplace_back(weights.input_size());
        std::copy(ins.back().begin(), ins.back().end(), pinned_ins.back().begin());
        pinned_outs.emplace_back(weights.output_size());
        std::fill(pinned_outs.back().begin(), pinned_outs.back().end(), kPoison);
        batch.inputs.emplace_back(pinned_ins.back().span());
        batch.outputs.push_back(pinned_outs.back().span());
        outs.emplace_back();
      } else {
        outs.emplace_back(weights.output_size(), kPoison);
        batch.inputs.emplace_back(ins.back());
        batch.outputs.emplace_back(outs.back());
      }
    }
    const auto output = [&](std::size_t r) {
      return std::vector<float>(batch.outputs[r].begin(), batch.outputs[r].end());
    };
    exec.launch(0, slot, batch);
    exec.wait(0, slot);
    for (std::size_t r = 0; r < rows; ++r) {
      if (batch.pinned[r]) {
        expect_matches_reference(weights, ins[r], output(r));
      } else {
        EXPECT_TRUE(std::all_of(outs[r].begin(), outs[r].end(), [](float x) { return std::isnan(x); }))
            << "row " << r << " was written before finish()";
      }
    }
    (void)exec.finish(0, slot, batch);
    for (std::size_t r = 0; r < rows; ++r) expect_matches_reference(weights, ins[r], output(r));
    slot = 1 - slot;
  }
}

TEST(BatchingGpu, PinnedRequestsAreReadAndWrittenInPlace) {
  SP_REQUIRE_GPU();
  pinned_rows_in_place(true);
  pinned_rows_in_place(false);
}

// The executor checks a request's claim to pinned memory at submit, with either I/O.
TEST(BatchingGpu, RequestsFalselyMarkedPinnedAreRejected) {
  SP_REQUIRE_GPU();
  const Device device(0);
  const auto weights = make_mlp_weights({16, 16}, 2);
  MlpModel model(device, weights);
  for (const BatchIo io : {BatchIo::copy, BatchIo::mapped}) {
    GpuExecutor exec(device, model, {1, true, report::SyncMode::spin, io});
    BatcherOptions o;
    o.policy.max_batch_size = 2;
    DynamicBatcher batcher(exec, o);
    std::vector<float> in(16, 0.5f), out(16, kPoison);
    PinnedBuffer<float> pinned_out(16);
    Request both{in, out};
    both.pinned = true;
    const auto refused = batcher.submit(both).get();
    EXPECT_EQ(refused.status, RequestStatus::rejected);
    EXPECT_NE(refused.error.find("input and output are not page-locked"), std::string::npos) << refused.error;
    Request half{in, pinned_out.span()};
    half.pinned = true;
    const auto half_refused = batcher.submit(half).get();
    EXPECT_EQ(half_refused.status, RequestStatus::rejected);
    EXPECT_NE(half_refused.error.find("its input is not page-locked"), std::string::npos) << half_refused.error;
    {
      // Registered caller memory is pinned: accepted, and with mapped I/O read in place,
      // also when submitted from a thread that has never called CUDA.
      const HostRegistration in_pinned{std::span<float>(in)}, out_pinned{std::span<float>(out)};
      const auto r = batcher.submit(both).get();
      EXPECT_TRUE(r.ok()) << r.error;
      expect_matches_reference(weights, in, out);
      std::fill(out.begin(), out.end(), kPoison);
      RequestResult from_thread;
      std::thread([&] { from_thread = batcher.submit(both).get(); }).join();
      EXPECT_TRUE(from_thread.ok()) << from_thread.error;
      expect_matches_reference(weights, in, out);
    }
    EXPECT_EQ(batcher.stats().rejected, 2u);
  }
}

using test_support::RotatingModel;

void padding_is_zero(BatchIo io, bool graphs) {
  const Device device(0);
  RotatingModel model(io == BatchIo::mapped);
  GpuExecutor exec(device, model, {1, graphs, report::SyncMode::spin, io});
  const std::vector<std::size_t> buckets = {8};
  exec.prepare(buckets);
  for (const std::size_t rows : {8u, 3u, 8u, 5u, 1u}) {
    std::vector<std::vector<float>> ins(rows, std::vector<float>(RotatingModel::kWidth, 7.0f));
    std::vector<std::vector<float>> outs(rows, std::vector<float>(RotatingModel::kWidth, kPoison));
    Batch batch;
    batch.bucket = 8;
    for (std::size_t r = 0; r < rows; ++r) {
      batch.inputs.push_back(ins[r]);
      batch.outputs.push_back(outs[r]);
    }
    // Both slots, so each sees a larger batch before a smaller one.
    for (std::size_t slot = 0; slot < kSlotsPerLane; ++slot) {
      exec.launch(0, slot, batch);
      exec.wait(0, slot);
      (void)exec.finish(0, slot, batch);
      for (std::size_t r = 0; r < rows; ++r) {
        const float want = (r + 1 < rows || rows == 8) ? 7.0f : 0.0f;
        EXPECT_EQ(outs[r], std::vector<float>(RotatingModel::kWidth, want))
            << rows << " rows, row " << r << ", slot " << slot;
      }
    }
  }
}

TEST(BatchingGpu, PaddingRowsAreZeroWithCopiedAndMappedIo) {
  SP_REQUIRE_GPU();
  padding_is_zero(BatchIo::copy, true);
  padding_is_zero(BatchIo::mapped, true);
  padding_is_zero(BatchIo::mapped, false);
}

TEST(BatchingGpu, MappedIoNeedsAModelThatAcceptsIt) {
  SP_REQUIRE_GPU();
  const Device device(0);
  RotatingModel model(false);
  EXPECT_THROW(GpuExecutor(device, model, {1, true, report::SyncMode::spin, BatchIo::mapped}), std::invalid_argument);
}

TEST(BatchingGpu, ModelRejectsSizesThatAreNotMultiplesOfEight) {
  SP_REQUIRE_GPU();
  EXPECT_THROW(MlpModel(Device(0), make_mlp_weights({40, 30, 8}, 1)), std::invalid_argument);
}

TEST(BatchingGpu, UnpreparedBucketIsALogicError) {
  SP_REQUIRE_GPU();
  const Device device(0);
  const auto weights = make_mlp_weights({16, 16}, 2);
  MlpModel model(device, weights);
  GpuExecutor exec(device, model, {1, true, report::SyncMode::blocking});
  const std::vector<std::size_t> buckets = {2};
  exec.prepare(buckets);
  std::vector<float> in(16, 1.0f), out(16);
  Batch batch;
  batch.bucket = 4;
  batch.inputs.push_back(in);
  batch.outputs.push_back(out);
  EXPECT_THROW((void)exec.run(0, batch), std::logic_error);
}

TEST(BatchingGpu, BatcherServesManyClientsCorrectly) {
  SP_REQUIRE_GPU();
  const Device device(0);
  const auto weights = make_mlp_weights({96, 128, 40}, 5);
  MlpModel model(device, weights);
  GpuExecutor exec(device, model, {3, true, report::SyncMode::blocking});
  BatcherOptions o;
  o.policy.max_batch_size = 16;
  o.policy.max_queue_delay = std::chrono::microseconds(200);
  o.record_queries = true;
  o.max_queue_size = 4096;
  DynamicBatcher batcher(exec, o);
  constexpr int kClients = 12, kEach = 40;
  std::vector<std::thread> clients;
  std::atomic<int> bad{0}, batched{0};
  for (int c = 0; c < kClients; ++c) {
    clients.emplace_back([&, c] {
      std::mt19937 rng(static_cast<unsigned>(100 + c));
      for (int i = 0; i < kEach; ++i) {
        const auto in = random_row(weights.input_size(), rng);
        std::vector<float> out(weights.output_size(), kPoison), want(weights.output_size());
        const auto r = batcher.submit(Request{in, out}).get();
        mlp_reference(weights, in, want);
        if (!r.ok() || !mlp_output_matches(out, want)) ++bad;
        if (r.batch_size > 1) ++batched;
      }
    });
  }
  for (auto& t : clients) t.join();
  EXPECT_EQ(bad.load(), 0);
  EXPECT_GT(batched.load(), 0);
  const auto records = batcher.take_records();
  ASSERT_EQ(records.size(), std::size_t{kClients * kEach});
  for (const auto& q : records) {
    ASSERT_TRUE(q.compute_ms.has_value());
    EXPECT_GT(*q.compute_ms, 0.0);
  }
}

// A model whose batches fail on demand: the failure stays with its requests.
class FlakyModel final : public DeviceModel {
 public:
  std::atomic<bool> fail{false};
  std::size_t input_size() const override { return 8; }
  std::size_t output_size() const override { return 8; }
  std::unique_ptr<ModelLane> make_lane(StreamRef stream, std::size_t) override {
    struct Lane final : ModelLane {
      FlakyModel* m;
      StreamRef s;
      Lane(FlakyModel* model, StreamRef stream) : m(model), s(stream) {}
      void prepare(std::size_t) override {}
      void enqueue(const float* in, float* out, std::size_t rows) override {
        if (m->fail) throw std::runtime_error("injected failure");
        SP_CUDA_CHECK(cudaMemcpyAsync(out, in, rows * 8 * sizeof(float), cudaMemcpyDeviceToDevice, s.handle()));
      }
    };
    return std::make_unique<Lane>(this, stream);
  }
};

TEST(BatchingGpu, FailingBatchDoesNotStopTheBatcher) {
  SP_REQUIRE_GPU();
  const Device device(0);
  FlakyModel model;
  GpuExecutor exec(device, model, {1, false, report::SyncMode::spin});
  BatcherOptions o;
  o.policy.max_batch_size = 4;
  o.policy.max_queue_delay = std::chrono::microseconds(0);
  DynamicBatcher batcher(exec, o);
  std::vector<float> in = {1, 2, 3, 4, 5, 6, 7, 8}, out(8, kPoison);
  model.fail = true;
  const auto failed = batcher.submit(Request{in, out}).get();
  EXPECT_EQ(failed.status, RequestStatus::failed);
  EXPECT_NE(failed.error.find("injected failure"), std::string::npos) << failed.error;
  model.fail = false;
  const auto good = batcher.submit(Request{in, out}).get();
  EXPECT_TRUE(good.ok()) << good.error;
  EXPECT_EQ(out, in);
}

TEST(BatchingGpu, TimesTheLayersAloneWithoutTheConversions) {
  SP_REQUIRE_GPU();
  const Device device(0);
  MlpModel model(device, make_mlp_weights({1024, 1024, 1024, 1024}, 5));
  Stream stream(device);
  const auto layers_us = model.time_layers(stream.ref(), 64, 2);
  ASSERT_EQ(layers_us.size(), 18u);  // 2 runs of 10 passes, the first of each not counted
  for (const double us : layers_us) {
    EXPECT_GT(us, 0.0);
    EXPECT_LT(us, 10'000.0);
  }
  // A whole forward pass runs the same GEMMs and two conversion kernels besides.
  auto lane = model.make_lane(stream.ref(), 64);
  lane->prepare(64);
  DeviceBuffer<float> in(device, 64 * 1024), out(device, 64 * 1024);
  SP_CUDA_CHECK(cudaMemsetAsync(in.data(), 0, in.bytes(), stream.handle()));
  Event start(device), stop(device);
  std::vector<double> forward_us;
  for (int i = 0; i < 12; ++i) {
    start.record(stream.ref());
    lane->enqueue(in.data(), out.data(), 64);
    stop.record(stream.ref());
    stop.synchronize();
    if (i >= 2) forward_us.push_back(elapsed(start, stop).count() * 1e3);
  }
  EXPECT_LT(report::summarize(layers_us).median, report::summarize(forward_us).median);
  EXPECT_THROW((void)model.time_layers(stream.ref(), 0, 1), std::invalid_argument);
}

TEST(BatchingGpu, TimesTheLayersOnTheHeuristicsFirstAnswersWithoutASearch) {
  SP_REQUIRE_GPU();
  const Device device(0);
  MlpModel model(device, make_mlp_weights({1024, 1024, 1024}, 6));
  Stream stream(device);
  const auto first_us = model.time_layers(stream.ref(), 32, 1, MlpModel::GemmPlans::heuristic_first);
  ASSERT_EQ(first_us.size(), 9u);
  for (const double us : first_us) {
    EXPECT_GT(us, 0.0);
    EXPECT_LT(us, 10'000.0);
  }
  EXPECT_EQ(model.gemm_searches(), 0u);  // cuBLASLt's own choice: nothing timed, nothing cached
  EXPECT_TRUE(model.gemm_choices(32).empty());
  const auto searched_us = model.time_layers(stream.ref(), 32, 1);
  EXPECT_EQ(searched_us.size(), 9u);
  EXPECT_EQ(model.gemm_searches(), 2u);  // bias + ReLU, and bias for the last layer
  EXPECT_EQ(model.gemm_choices(32).size(), 2u);
}

}  // namespace
}  // namespace streampipe::serving
