// SPDX-License-Identifier: Apache-2.0
// Faults in the middle of a run on the GPU: operations that throw before enqueuing, CUDA
// errors inside operations (non-sticky: a copy to a null pointer, a copy of no known kind), host stages and
// callbacks that throw, cancel() racing submit() from many threads, and an item whose size
// the operation refuses. Every item is resolved exactly once (counted per index), every
// wait is bounded, done items are exact, and the engine goes on afterwards. (A sticky error
// poisons the context: test_engine_sticky_gpu.cu, a process of its own.)

#include "bounded.hpp"
#include "engine_faults.hpp"
#include "fault_plan.hpp"

#include "streampipe/cuda/error.hpp"
#include "streampipe/cuda/pinned_buffer.hpp"
#include "streampipe/ops/affine.hpp"
#include "streampipe/ops/pipeline_ops.hpp"
#include "streampipe/pipeline/engine.hpp"
#include "support/gpu.hpp"

#include <array>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <memory>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace streampipe::pipeline {
namespace {

using testing::finishes_within;
using testing::result_within;

enum class Fault { none, thrown, cuda_copy, cuda_direction, produce, consume, callback };

Fault fault_of(std::size_t i) {
  constexpr std::array faults{Fault::thrown,  Fault::cuda_copy, Fault::cuda_direction,
                              Fault::produce, Fault::consume,   Fault::callback};
  return testing::planned_fault(i, 0x632BE59BD9B4E019ull, 20, faults);
}

// pageable span to span (batches), pinned span to span (batches, copied in place), produce
// and consume stages, a pageable span input with a consume stage.
enum class Kind { pageable, pinned, stages, span_consume };
Kind kind_of(std::size_t i) { return static_cast<Kind>(i % 4); }

// y = 2x + 1 (ops::affine), failing a batch that holds an item with an operation fault: a
// C++ exception before anything is enqueued, or a CUDA error from a bad call on the stream.
Operation faulty_affine(bool inject) {
  Operation op = ops::affine_operation(2.0f, 1.0f);
  op.device = [inject, base = op.device](const Batch& b) {
    for (std::size_t k = 0; inject && k < b.size(); ++k) {
      switch (fault_of(b.index(k))) {
        case Fault::thrown: throw std::runtime_error("injected operation failure");
        case Fault::cuda_copy:
          SP_CUDA_CHECK(cudaMemcpyAsync(nullptr, b.in(), 16, cudaMemcpyDeviceToDevice, b.stream().handle()));
          break;
        case Fault::cuda_direction:  // no such copy kind: cudaErrorInvalidMemcpyDirection
          SP_CUDA_CHECK(cudaMemcpyAsync(b.out(), b.in(), 16, static_cast<cudaMemcpyKind>(7), b.stream().handle()));
          break;
        default: break;
      }
    }
    base(b);
  };
  return op;
}

struct Items {
  std::vector<std::vector<float>> in, out, want;
  std::vector<PinnedBuffer<float>> pinned_in, pinned_out;  // by index, for Kind::pinned

  explicit Items(std::size_t n) : in(n), out(n), want(n), pinned_in(n), pinned_out(n) {
    for (std::size_t i = 0; i < n; ++i) {
      in[i].resize(1 + (i * 389) % 20000);
      for (std::size_t k = 0; k < in[i].size(); ++k) in[i][k] = static_cast<float>((i * 7 + k) % 1000) * 0.25f;
      want[i].resize(in[i].size());
      ops::affine_host(in[i], want[i], 2.0f, 1.0f);
      out[i].assign(in[i].size(), -1.0f);
      if (kind_of(i) == Kind::pinned) {
        pinned_in[i] = PinnedBuffer<float>(in[i].size());
        std::memcpy(pinned_in[i].data(), in[i].data(), in[i].size() * sizeof(float));
        pinned_out[i] = PinnedBuffer<float>(in[i].size());
      }
    }
  }

  Item make(std::size_t i, bool inject) {
    const Fault f = inject ? fault_of(i) : Fault::none;
    std::vector<float>* out_i = &out[i];
    const auto consume = [out_i, f](std::span<const std::byte> got) {
      if (f == Fault::consume) throw std::runtime_error("injected consume failure");
      out_i->resize(got.size() / sizeof(float));
      std::memcpy(out_i->data(), got.data(), got.size());
    };
    Item item;
    item.label = "array-" + std::to_string(i);
    switch (kind_of(i)) {
      case Kind::pageable:
        item = make_item(std::span<const float>(in[i]), std::span<float>(out[i]), item.label);
        break;
      case Kind::pinned:
        item = make_item(std::span<const float>(pinned_in[i].span()), pinned_out[i].span(), item.label);
        break;
      case Kind::stages: {
        const std::vector<float>* in_i = &in[i];
        item.produce = [in_i, f](StagingInput& staging) {
          if (f == Fault::produce) throw std::runtime_error("injected produce failure");
          const std::size_t bytes = in_i->size() * sizeof(float);
          std::memcpy(staging.allocate(bytes, bytes).data(), in_i->data(), bytes);
        };
        item.consume = consume;
        break;
      }
      case Kind::span_consume:
        item.in = std::as_bytes(std::span<const float>(in[i]));
        item.consume = consume;
        break;
    }
    return item;
  }

  [[nodiscard]] bool exact(std::size_t i) const {
    const float* got = kind_of(i) == Kind::pinned ? pinned_out[i].data() : out[i].data();
    const std::size_t n = kind_of(i) == Kind::pinned ? pinned_out[i].size() : out[i].size();
    return n == want[i].size() && std::memcmp(got, want[i].data(), n * sizeof(float)) == 0;
  }
};

class EngineFaultsGpu : public ::testing::TestWithParam<testing::Shape> {
 protected:
  [[nodiscard]] EngineOptions options(int lanes = 3, int depth = 2) const {
    return testing::shape_options(GetParam(), Backend::gpu, lanes, depth);
  }
};

TEST_P(EngineFaultsGpu, FaultsMidRunResolveEveryItemExactlyOnce) {
  SP_REQUIRE_GPU();
  constexpr std::size_t kItems = 600;
  Items items(kItems);
  testing::Deliveries delivered(kItems + 1);  // and one submitted afterwards
  auto o = options();
  o.on_complete = delivered.callback([](std::size_t i) { return fault_of(i) == Fault::callback; });
  auto engine = std::make_unique<Engine>(faulty_affine(true), o);
  auto [futures, stats] =
      testing::run_past_a_callback_failure(*engine, kItems, [&items](std::size_t i) { return items.make(i, true); });
  EXPECT_EQ(stats.done + stats.failed, kItems);

  std::size_t cuda_failures = 0;
  for (std::size_t i = 0; i < kItems; ++i) {
    const auto r = result_within(futures[i]);
    ASSERT_TRUE(r);
    const Fault f = fault_of(i);
    const bool own = f == Fault::thrown || f == Fault::cuda_copy || f == Fault::cuda_direction ||
                     (f == Fault::produce && kind_of(i) == Kind::stages) ||
                     (f == Fault::consume && (kind_of(i) == Kind::stages || kind_of(i) == Kind::span_consume));
    if (r->ok()) {
      EXPECT_FALSE(own) << "item " << i << " was injected a fault but is done";
      EXPECT_TRUE(items.exact(i)) << "item " << i;
      continue;
    }
    EXPECT_EQ(r->status, ItemStatus::failed);
    EXPECT_NE(r->error.find("array-" + std::to_string(i)), std::string::npos) << r->error;
    // "operation 'affine' failed", or "... 'affine' on GPU n failed" on a set of GPUs.
    const bool batch = r->error.find("operation 'affine' ") != std::string::npos &&
                       r->error.find(" failed: ") != std::string::npos;
    EXPECT_TRUE(own || batch) << "item " << i << ": " << r->error;
    try {
      std::rethrow_exception(r->exception);
    } catch (const CudaError& e) {
      EXPECT_FALSE(e.sticky()) << e.what();
      ++cuda_failures;
    } catch (...) {
    }
  }
  EXPECT_GT(cuda_failures, 0u);
  delivered.expect_each_once(kItems);

  // Non-sticky errors fail only their batches: the engine goes on.
  auto after = engine->submit(items.make(kItems - 1, false));
  engine->flush();  // alone in a batch of several: dispatched now, not when the batch fills
  const auto r = result_within(after);
  ASSERT_TRUE(r);
  EXPECT_TRUE(r->ok()) << r->error;
  EXPECT_TRUE(items.exact(kItems - 1));
  finishes_within("the destructor", [&] { engine.reset(); });
}

TEST_P(EngineFaultsGpu, CancelRacingSubmitsFromManyThreadsResolvesEveryItemOnce) {
  SP_REQUIRE_GPU();
  constexpr int kThreads = 8, kPerThread = 50;
  constexpr std::size_t kItems = kThreads * kPerThread;
  std::mt19937 rng(24);
  for (int round = 0; round < 3; ++round) {
    Items items(kItems);
    testing::Deliveries delivered(kItems);
    auto o = options(2, 2);
    o.on_complete = delivered.callback();
    auto engine = std::make_unique<Engine>(faulty_affine(false), o);
    const auto cancel_after = std::chrono::microseconds(std::uniform_int_distribution<int>(0, 5000)(rng));
    auto per_thread = testing::submit_from_threads_while_cancelling(
        *engine, kThreads, kPerThread, cancel_after, [&items](std::size_t i) { return items.make(i, false); });
    RunStats stats;
    finishes_within("drain()", [&] { stats = engine->drain(); });
    EXPECT_EQ(stats.done + stats.cancelled, kItems) << "round " << round;
    for (auto& list : per_thread)
      for (auto& s : list) {
        const auto r = result_within(s.future);
        ASSERT_TRUE(r);
        if (r->ok()) {
          EXPECT_TRUE(items.exact(s.item)) << "item " << s.item;
        } else {
          EXPECT_EQ(r->status, ItemStatus::cancelled) << r->error;
        }
      }
    delivered.expect_each_once();
    finishes_within("the destructor", [&] { engine.reset(); });
  }
}

// Issue 24, class 5, on the GPU: a pageable input with a consume stage goes through a
// worker, where the operation's refusal of the size used to end the process (an exception
// out of a worker's task). Now it is refused at submit(), before the item is counted.
TEST_P(EngineFaultsGpu, AnItemTheOperationRefusesAtSubmitIsNotLeftPending) {
  SP_REQUIRE_GPU();
  auto engine = std::make_unique<Engine>(ops::multiply_divide_operation({1, 64, 1}), options());
  std::vector<std::byte> ragged(4099), whole(4096);
  EXPECT_THROW((void)engine->submit(testing::consumed_into(ragged, nullptr)), std::invalid_argument);
  std::vector<std::byte> consumed;
  auto f = engine->submit(testing::consumed_into(whole, &consumed));
  RunStats stats;
  finishes_within("drain()", [&] { stats = engine->drain(); });
  EXPECT_EQ(stats.submitted, 1u);
  const auto r = result_within(f);
  ASSERT_TRUE(r);
  EXPECT_TRUE(r->ok()) << r->error;
  EXPECT_EQ(consumed, whole);  // zeros multiplied and divided stay zeros
  finishes_within("the destructor", [&] { engine.reset(); });
}

INSTANTIATE_TEST_SUITE_P(Shapes, EngineFaultsGpu,
                         ::testing::Values(testing::Shape{Delivery::as_completed, 1},
                                           testing::Shape{Delivery::in_order, 4}),
                         testing::shape_name);

}  // namespace
}  // namespace streampipe::pipeline
