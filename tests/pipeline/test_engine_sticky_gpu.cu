// SPDX-License-Identifier: Apache-2.0
// A sticky CUDA error in the middle of a run (a kernel writing through a wild pointer
// corrupts the context): every item is still resolved exactly once, those that could not
// run fail naming the device's error, later submits fail at once, callbacks that submit
// after it do not deadlock delivery, and the engine's destructor returns. The context stays
// broken, so this is a process of its own.

#include "bounded.hpp"

#include "streampipe/cuda/launch.hpp"
#include "streampipe/ops/pipeline_ops.hpp"
#include "streampipe/pipeline/engine.hpp"
#include "support/gpu.hpp"

#include <atomic>
#include <mutex>
#include <string>
#include <vector>

namespace streampipe::pipeline {
namespace {

using testing::finishes_within;
using testing::result_within;

__global__ void write_wild(int* p) { p[threadIdx.x] = 1; }

TEST(EngineStickyGpu, EveryItemResolvesOnceAndNothingHangsAfterAStickyError) {
  SP_REQUIRE_GPU();
  constexpr std::size_t kFirst = 40, kChained = 20, kAll = kFirst + kChained, kWild = 6;
  Operation op = ops::affine_operation(2.0f, 1.0f);
  op.device = [base = op.device](const Batch& b) {
    if (b.index(0) == kWild) {
      LaunchConfig cfg;
      cfg.block = dim3(32);
      launch(b.stream(), cfg, write_wild, reinterpret_cast<int*>(0x10));
    }
    base(b);
  };
  std::vector<std::vector<float>> in(kAll + 1, std::vector<float>(50'000, 1.0f)), out(kAll + 1);
  for (auto& o : out) o.assign(50'000, 0.0f);
  std::vector<std::atomic<int>> delivered(kAll + 1);
  std::mutex m;
  std::vector<std::future<ItemResult>> chained;
  std::atomic<std::size_t> next{kFirst};
  Engine* self = nullptr;
  EngineOptions o;
  o.backend = Backend::gpu;
  o.devices = {0};  // one device: on a set, the others go on after GPU 0's sticky error
  o.lanes = 2;
  o.depth = 2;
  o.delivery = Delivery::in_order;
  o.on_complete = [&](const ItemResult& r) {
    ++delivered.at(r.index);
    if (r.ok()) return;
    const std::size_t i = next++;  // a failed item's callback submits another
    if (i >= kAll) return;
    auto f = self->submit(make_item(std::span<const float>(in[i]), std::span<float>(out[i])));
    std::lock_guard lock(m);
    chained.push_back(std::move(f));
  };
  auto engine = std::make_unique<Engine>(op, o);
  self = engine.get();
  std::vector<std::future<ItemResult>> futures;
  for (std::size_t i = 0; i < kFirst; ++i) {
    auto item = make_item(std::span<const float>(in[i]), std::span<float>(out[i]));
    item.label = "part-" + std::to_string(i);
    futures.push_back(engine->submit(std::move(item)));
  }
  RunStats stats;
  finishes_within("drain() after a sticky error", [&] { stats = engine->drain(); });
  EXPECT_EQ(stats.submitted, kAll);
  EXPECT_EQ(stats.done + stats.failed, kAll);

  // Items done before the kernel faulted may be fine; at most what was in flight then (two
  // lanes of two slots, and as many refilled while the fault reached the host).
  std::size_t done_after = 0;
  for (std::size_t i = 0; i < kFirst; ++i) {
    const auto r = result_within(futures[i]);
    ASSERT_TRUE(r);
    if (i == kWild) {
      EXPECT_EQ(r->status, ItemStatus::failed);
      EXPECT_NE(r->error.find("sticky"), std::string::npos) << r->error;
    }
    if (r->ok()) {
      if (i > kWild) ++done_after;
      continue;
    }
    EXPECT_EQ(r->status, ItemStatus::failed) << "item " << i;
    EXPECT_NE(r->error.find("part-" + std::to_string(i)), std::string::npos) << r->error;
  }
  EXPECT_LE(done_after, 8u);
  {
    std::lock_guard lock(m);
    ASSERT_EQ(chained.size(), kChained);
    for (auto& f : chained) {
      const auto r = result_within(f);
      ASSERT_TRUE(r);
      EXPECT_EQ(r->status, ItemStatus::failed);
    }
  }
  auto late = engine->submit(make_item(std::span<const float>(in[kAll]), std::span<float>(out[kAll])));
  const auto r = result_within(late);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, ItemStatus::failed);
  EXPECT_NE(r->error.find("the device failed earlier"), std::string::npos) << r->error;
  for (std::size_t i = 0; i <= kAll; ++i) EXPECT_EQ(delivered[i].load(), 1) << "item " << i;
  finishes_within("the destructor after a sticky error", [&] { engine.reset(); });
}

}  // namespace
}  // namespace streampipe::pipeline
