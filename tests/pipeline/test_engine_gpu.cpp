// SPDX-License-Identifier: Apache-2.0
// The engine on the GPU: exact results against CPU references from pageable, pinned and
// registered memory, batching, graph replay, chunking, errors naming their item.

#include "streampipe/cuda/pinned_buffer.hpp"
#include "streampipe/cuda/pinned_pool.hpp"
#include "streampipe/ops/affine.hpp"
#include "streampipe/ops/pipeline_ops.hpp"
#include "streampipe/ops/rgb_to_gray.hpp"
#include "streampipe/pipeline/chunked.hpp"
#include "streampipe/pipeline/engine.hpp"
#include "streampipe/pipeline/planner.hpp"
#include "support/gpu.hpp"

#include <atomic>
#include <chrono>
#include <cstring>
#include <limits>
#include <random>
#include <set>
#include <thread>

namespace streampipe::pipeline {
namespace {

EngineOptions gpu(int lanes, int depth = 2) {
  EngineOptions o;
  o.backend = Backend::gpu;
  o.lanes = lanes;
  o.depth = depth;
  return o;
}

std::vector<std::uint8_t> random_rgb(std::size_t pixels, unsigned seed) {
  std::mt19937 rng(seed);
  std::vector<std::uint8_t> v(3 * pixels);
  for (auto& b : v) b = static_cast<std::uint8_t>(rng());
  return v;
}

TEST(EngineGpu, GrayImagesFromPageableAndPinnedMatchCpu) {
  SP_REQUIRE_GPU();
  Engine engine(ops::gray_operation(), gpu(4));
  EXPECT_FALSE(engine.device_set().cpu);
  constexpr int kImages = 24;
  std::vector<std::vector<std::uint8_t>> rgb, gray, want;
  std::vector<PinnedBuffer<std::uint8_t>> pinned_in, pinned_out;
  std::vector<std::future<ItemResult>> futures;
  for (int i = 0; i < kImages; ++i) {
    const std::size_t pixels = 640 * 480 + static_cast<std::size_t>(i) * 131;  // odd sizes
    rgb.push_back(random_rgb(pixels, static_cast<unsigned>(i)));
    want.emplace_back(pixels);
    ops::rgb_to_gray_host(rgb.back(), want.back());
    gray.emplace_back(pixels, 0xAB);
  }
  for (int i = 0; i < kImages; ++i) {
    if (i % 2 == 0) {  // pageable in and out: staged through the pool
      futures.push_back(engine.submit(make_item(std::span<const std::uint8_t>(rgb[i]), std::span<std::uint8_t>(gray[i]))));
    } else {  // pinned: copied directly
      pinned_in.emplace_back(rgb[i].size());
      std::memcpy(pinned_in.back().data(), rgb[i].data(), rgb[i].size());
      pinned_out.emplace_back(gray[i].size());
      std::memset(pinned_out.back().data(), 0xAB, gray[i].size());
      futures.push_back(engine.submit(make_item(std::span<const std::uint8_t>(pinned_in.back().span()),
                                                pinned_out.back().span())));
    }
  }
  const auto stats = engine.drain();
  EXPECT_EQ(stats.done, static_cast<std::size_t>(kImages));
  std::size_t pinned_k = 0;
  for (int i = 0; i < kImages; ++i) {
    const auto r = futures[static_cast<std::size_t>(i)].get();
    ASSERT_TRUE(r.ok()) << r.error;
    EXPECT_GT(r.timing.h2d_ms, 0.0);
    if (i % 2 == 0) {
      ASSERT_EQ(gray[i], want[i]) << i;
    } else {
      const auto& out = pinned_out[pinned_k++];
      ASSERT_EQ(std::memcmp(out.data(), want[i].data(), want[i].size()), 0) << i;
    }
  }
  const auto rep = engine.timeline().report();
  EXPECT_EQ(rep.items, static_cast<std::size_t>(kImages));
  EXPECT_GT(rep.h2d_gbps, 0.0);
  for (const auto& r : engine.timeline().records()) EXPECT_LE(r.start_ms, r.end_ms);
}

// A set naming GPU 0 twice: two members with lanes, slots and staging of their own on one
// GPU, which is how a one-GPU machine runs the device-set code paths.
TEST(EngineGpu, ASetOfTwoMembersOnOneGpuSpreadsItemsAndMatchesCpu) {
  SP_REQUIRE_GPU();
  auto options = gpu(2);
  options.devices = {0, 0};
  options.delivery = Delivery::in_order;
  Engine engine(ops::gray_operation(), options);
  EXPECT_EQ(engine.device_set().gpus, (std::vector<int>{0, 0}));
  constexpr int kImages = 40;
  std::vector<std::vector<std::uint8_t>> rgb, gray, want;
  for (int i = 0; i < kImages; ++i) {
    const std::size_t pixels = 320 * 240 + static_cast<std::size_t>(i) * 77;
    rgb.push_back(random_rgb(pixels, static_cast<unsigned>(100 + i)));
    want.emplace_back(pixels);
    ops::rgb_to_gray_host(rgb.back(), want.back());
    gray.emplace_back(pixels, 0xAB);
  }
  std::vector<std::future<ItemResult>> futures;
  for (int i = 0; i < kImages; ++i)
    futures.push_back(engine.submit(make_item(std::span<const std::uint8_t>(rgb[i]), std::span<std::uint8_t>(gray[i]))));
  EXPECT_EQ(engine.drain().done, static_cast<std::size_t>(kImages));
  std::set<int> lanes;
  for (int i = 0; i < kImages; ++i) {
    const auto r = futures[static_cast<std::size_t>(i)].get();
    ASSERT_TRUE(r.ok()) << r.error;
    EXPECT_EQ(r.device, 0);
    lanes.insert(r.lane);
    ASSERT_EQ(gray[i], want[i]) << i;
  }
  // Lanes 0-1 belong to the first member, 2-3 to the second: both took work.
  EXPECT_TRUE(lanes.count(0) + lanes.count(1) > 0 && lanes.count(2) + lanes.count(3) > 0);
}

TEST(EngineGpu, BatchedSingleBlockKernelCoversManyArraysPerLaunch) {
  SP_REQUIRE_GPU();
  auto o = gpu(4);
  o.batch_items = 8;
  Engine engine(ops::multiply_divide_operation({1, 64, 50}), o);
  constexpr std::size_t kArrays = 50;
  std::mt19937 rng(9);
  std::uniform_real_distribution<float> dist(-100.f, 100.f);
  std::vector<std::vector<float>> in(kArrays), out(kArrays);
  std::vector<std::future<ItemResult>> futures;
  for (std::size_t a = 0; a < kArrays; ++a) {
    in[a].resize(4096 + a * 3);
    for (auto& v : in[a]) v = dist(rng);
    out[a].assign(in[a].size(), std::numeric_limits<float>::quiet_NaN());
    futures.push_back(engine.submit(make_item(std::span<const float>(in[a]), std::span<float>(out[a]))));
  }
  engine.drain();
  std::size_t max_batch = 0;
  for (std::size_t a = 0; a < kArrays; ++a) {
    const auto r = futures[a].get();
    ASSERT_TRUE(r.ok()) << r.error;
    max_batch = std::max(max_batch, r.batch_size);
    ASSERT_EQ(std::memcmp(in[a].data(), out[a].data(), in[a].size() * 4), 0) << a;
  }
  EXPECT_EQ(max_batch, 8u);
}

// Submits `arrays` random arrays of n floats from pageable memory through an engine of
// ops::affine_operation(2, 1), drains it, and checks every output against the host's.
void expect_affine_round_trip(Engine& engine, std::size_t arrays, std::size_t n) {
  std::vector<std::vector<float>> in(arrays, std::vector<float>(n)), out(arrays, std::vector<float>(n, -1.0f));
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> dist(-1.f, 1.f);
  for (auto& v : in)
    for (auto& x : v) x = dist(rng);
  std::vector<std::future<ItemResult>> futures;
  for (std::size_t i = 0; i < in.size(); ++i)
    futures.push_back(engine.submit(make_item(std::span<const float>(in[i]), std::span<float>(out[i]))));
  engine.drain();
  std::vector<float> want(n);
  for (std::size_t i = 0; i < in.size(); ++i) {
    ASSERT_TRUE(futures[i].get().ok());
    ops::affine_host(in[i], want, 2.0f, 1.0f);
    ASSERT_EQ(std::memcmp(out[i].data(), want.data(), n * 4), 0) << i;
  }
}

TEST(EngineGpu, GraphReplayGivesSameResults) {
  SP_REQUIRE_GPU();
  auto o = gpu(2, 2);
  o.use_graphs = true;
  Engine engine(ops::affine_operation(2.0f, 1.0f), o);
  expect_affine_round_trip(engine, 40, 100'003);
}

// More lanes than hardware queues: the lanes' events are untimed (a timed one would hold
// its queue until the kernel before it ends), and each slot is one span reported as compute.
TEST(EngineGpu, LanesBeyondTheHardwareQueuesAreTimedAsOneSpan) {
  SP_REQUIRE_GPU();
  const auto lanes = static_cast<std::size_t>(hardware_queues()) + 1;
  Engine engine(ops::affine_operation(2.0f, 1.0f), gpu(static_cast<int>(lanes), 1));
  ASSERT_NO_FATAL_FAILURE(expect_affine_round_trip(engine, 3 * lanes, 4099));
  std::size_t computed = 0;
  for (const auto& r : engine.timeline().records()) {
    if (r.stage == Stage::compute) {
      EXPECT_GT(r.end_ms, r.start_ms);
      ++computed;
    } else if (r.stage == Stage::h2d || r.stage == Stage::d2h) {
      EXPECT_EQ(r.end_ms, r.start_ms) << "copies are not timed apart from the kernel";
    }
  }
  EXPECT_EQ(computed, 3 * lanes);
}

TEST(EngineGpu, ChunkedLargeArrayFromPinnedAndPageable) {
  SP_REQUIRE_GPU();
  constexpr std::size_t n = (std::size_t{48} << 20) / 4 + 7;  // 48 MiB of floats and a tail
  std::vector<float> x(n);
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> dist(-10.f, 10.f);
  for (auto& v : x) v = dist(rng);
  std::vector<float> want(n);
  ops::affine_host(x, want, 0.5f, 3.0f);
  for (int lanes : {1, 3}) {
    Engine engine(ops::affine_operation(0.5f, 3.0f), gpu(lanes));
    std::vector<float> y(n, -1.0f);
    const auto run = run_chunked(engine, std::span<const float>(x), std::span<float>(y), std::size_t{1} << 20);
    ASSERT_TRUE(run.ok());
    EXPECT_EQ(run.chunks, (n + (1 << 20) - 1) / (1 << 20));
    ASSERT_EQ(std::memcmp(y.data(), want.data(), n * 4), 0) << lanes;
    // Registered (pinned in place) input and output take the direct path.
    std::vector<float> y2(n, -1.0f);
    HostRegistration rin{std::span<float>(x)}, rout{std::span<float>(y2)};
    const auto run2 = run_chunked(engine, std::span<const float>(x), std::span<float>(y2), std::size_t{3} << 20);
    ASSERT_TRUE(run2.ok());
    ASSERT_EQ(std::memcmp(y2.data(), want.data(), n * 4), 0) << lanes;
  }
}

TEST(EngineGpu, FailingOperationAndBadLaunchNameTheirItems) {
  SP_REQUIRE_GPU();
  Operation op = ops::affine_operation(1.0f, 1.0f);
  auto base = op.device;
  op.device = [base](const Batch& b) {
    if (b.index(0) == 3) throw std::runtime_error("refused");
    if (b.index(0) == 5)  // a non-sticky CUDA error inside the operation
      SP_CUDA_CHECK(cudaMemcpyAsync(nullptr, b.in(), 16, cudaMemcpyDeviceToDevice, b.stream().handle()));
    base(b);
  };
  Engine engine(op, gpu(2));
  std::vector<std::vector<float>> in(8, std::vector<float>(1000, 1.0f)), out(8, std::vector<float>(1000, 0.0f));
  std::vector<std::future<ItemResult>> futures;
  for (std::size_t i = 0; i < in.size(); ++i) {
    auto item = make_item(std::span<const float>(in[i]), std::span<float>(out[i]));
    item.label = "part-" + std::to_string(i);
    futures.push_back(engine.submit(std::move(item)));
  }
  const auto stats = engine.drain();
  EXPECT_EQ(stats.failed, 2u);
  EXPECT_EQ(stats.done, 6u);
  for (std::size_t i = 0; i < in.size(); ++i) {
    const auto r = futures[i].get();
    if (i == 3 || i == 5) {
      EXPECT_EQ(r.status, ItemStatus::failed);
      EXPECT_NE(r.error.find("part-" + std::to_string(i)), std::string::npos) << r.error;
      EXPECT_EQ(out[i][0], 0.0f);  // no partial output reported as done
    } else {
      ASSERT_TRUE(r.ok()) << r.error;
      EXPECT_EQ(out[i][999], 2.0f);
    }
  }
  // The engine is still usable afterwards.
  std::vector<float> a(10, 1.0f), b(10);
  EXPECT_TRUE(engine.submit(make_item(std::span<const float>(a), std::span<float>(b))).get().ok());
}

TEST(EngineGpu, PinnedPoolIsReusedAcrossEngines) {
  SP_REQUIRE_GPU();
  std::vector<std::uint8_t> rgb = random_rgb(1 << 20, 3), gray(1 << 20);
  const auto run_once = [&] {
    Engine engine(ops::gray_operation(), gpu(2));
    for (int i = 0; i < 4; ++i)
      (void)engine.submit(make_item(std::span<const std::uint8_t>(rgb), std::span<std::uint8_t>(gray)));
    engine.drain();
  };
  run_once();
  const auto before = PinnedPool::global().stats();
  run_once();
  const auto after = PinnedPool::global().stats();
  EXPECT_EQ(after.misses, before.misses) << "the second run allocated pinned memory again";
  EXPECT_GT(after.hits, before.hits);
}

// Pageable input goes through a staging ring far smaller than the slots in flight, so each
// block is lent again as soon as its copy to the device is done, while other slots still
// compute. Every array is distinct and comes back exactly: a block reused before its DMA
// had read it would show another array's data.
TEST(EngineGpu, PageableInputThroughASmallStagingRingComesBackExactly) {
  SP_REQUIRE_GPU();
  constexpr std::size_t kArrays = 64, n = 1 << 20;  // 4 MiB each
  std::vector<std::vector<float>> in(kArrays), out(kArrays);
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> dist(-100.f, 100.f);
  for (auto& v : in) {
    v.resize(n);
    for (auto& x : v) x = dist(rng);
  }
  for (const std::size_t budget : {std::size_t{3} * n * 4, std::size_t{0}}) {
    auto o = gpu(8, 2);  // 16 slots
    o.devices = {0};     // the budget is per device
    o.staging_bytes = budget;
    // 500 repeats (~10 ms per array) keep the device, not the host's staging, the slower
    // side, so slots wait on their lanes while holding their input. With 50 (~1 ms) the two
    // were close, and a block per slot once peaked at exactly the ring's 3 blocks on an H100.
    Engine engine(ops::multiply_divide_operation({1, 64, 500}), o);
    std::vector<std::future<ItemResult>> futures;
    for (std::size_t a = 0; a < kArrays; ++a) {
      out[a].assign(n, std::numeric_limits<float>::quiet_NaN());
      futures.push_back(engine.submit(make_item(std::span<const float>(in[a]), std::span<float>(out[a]))));
    }
    const auto stats = engine.drain();
    EXPECT_EQ(stats.done, kArrays);
    for (std::size_t a = 0; a < kArrays; ++a) {
      ASSERT_TRUE(futures[a].get().ok());
      ASSERT_EQ(std::memcmp(in[a].data(), out[a].data(), n * 4), 0) << "array " << a << ", budget " << budget;
    }
    if (budget > 0) {
      EXPECT_LE(stats.staging_peak_bytes, budget);
    } else {  // a block per slot, held until the slot completes
      EXPECT_GT(stats.staging_peak_bytes, 3 * n * 4);
    }
    EXPECT_NE(engine.describe().find(budget > 0 ? "staging up to 12 MiB" : "a block per slot"), std::string::npos)
        << engine.describe();
  }
}

// Completion callbacks that submit pageable work while the staging budget is spent: the
// waiting submit takes a block back itself (its copies are done), it does not wait for a
// completion thread, which here is the one running the callback.
TEST(EngineGpu, CallbacksSubmitPageableWorkWhileStagingIsSpent) {
  SP_REQUIRE_GPU();
  constexpr std::size_t kItems = 40, n = 256 * 1024;
  std::vector<std::vector<float>> in(kItems, std::vector<float>(n)), out(kItems, std::vector<float>(n, -1.f));
  for (std::size_t i = 0; i < kItems; ++i) in[i].assign(n, static_cast<float>(i));
  std::atomic<std::size_t> next{2};
  std::atomic<std::size_t> finished{0};
  Engine* self = nullptr;
  auto o = gpu(1, 2);  // one lane: one completion thread, the callbacks' own
  o.staging_bytes = n * 4;  // one block
  o.on_complete = [&](const ItemResult& r) {
    EXPECT_TRUE(r.ok()) << r.error;
    const std::size_t i = next++;
    if (i < kItems) (void)self->submit(make_item(std::span<const float>(in[i]), std::span<float>(out[i])));
    finished++;
  };
  Engine engine(ops::affine_operation(2.0f, 1.0f), o);
  self = &engine;
  (void)engine.submit(make_item(std::span<const float>(in[0]), std::span<float>(out[0])));
  (void)engine.submit(make_item(std::span<const float>(in[1]), std::span<float>(out[1])));
  for (int spin = 0; spin < 10000 && finished.load() < kItems; ++spin)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  ASSERT_EQ(finished.load(), kItems) << "the chain of submits stalled";
  engine.drain();
  for (std::size_t i = 0; i < kItems; ++i) EXPECT_EQ(out[i][n - 1], 2.0f * static_cast<float>(i) + 1.0f) << i;
}

// The planner decides from live timings, so each case sits far from the thresholds it tests.
// Small kernel: batches of b >= 2 on 16 lanes need 1.5 x kernel / item_link > 16 items
// computing at once, item_link being an item's share of both directions at once. One
// 64-thread block on 1M floats with 50 repeats takes about 1.07 ms on an H100, and 8 MB over
// both directions (63 to 101 GB/s across runs, run16) 0.08 to 0.13 ms: 12 to 19 items, on
// the edge (batches of 1 in 2 of 8 runs). The same kernel time on 256K floats with 200
// repeats against a quarter of the link time: 48 to 77 items, batches of 3 to 5, a factor 3
// or more away from the edge. Copy-bound: affine on 16 MiB chunks computes ~30x faster than
// the link moves them.
TEST(PlannerGpu, BatchesSingleBlockKernelsAndKeepsCopyBoundWorkOnFewLanes) {
  SP_REQUIRE_GPU();
  std::vector<float> array(1 << 18, 1.5f);
  const auto small = plan_items(ops::multiply_divide_operation({1, 64, 200}),
                                std::as_bytes(std::span<const float>(array)), array.size() * 4, 200, gpu(4));
  EXPECT_GT(small.options.batch_items, 1) << small.reason;
  EXPECT_GT(small.options.lanes, 4) << small.reason;
  EXPECT_NE(small.reason.find("small kernel"), std::string::npos) << small.reason;
  // The measurements behind it, with the margins above: eight single-block launches at once
  // cost about one, and one costs far more than its item's transfer.
  EXPECT_LT(small.kernel_ms, 0.5 * 8 * small.kernel_ms_one) << small.reason;
  EXPECT_GT(small.kernel_ms_one, 4 * small.transfer_ms / small.options.batch_items) << small.reason;

  std::vector<float> big((std::size_t{256} << 20) / 4, 2.0f);
  const auto copy = plan_chunked(ops::affine_operation(2.0f, 1.0f), std::as_bytes(std::span<const float>(big)), 4, 4, gpu(8));
  EXPECT_EQ(copy.options.lanes, 4) << copy.reason;
  EXPECT_NE(copy.reason.find("copy-bound"), std::string::npos) << copy.reason;
  EXPECT_GE(copy.chunk_records * 4, std::size_t{1} << 20);
  EXPECT_LT(copy.kernel_ms, copy.transfer_ms);
  // The plan runs as it is.
  Engine engine(ops::affine_operation(2.0f, 1.0f), copy.options);
  std::vector<float> out(big.size());
  ASSERT_TRUE(run_chunked(engine, std::span<const float>(big), std::span<float>(out), copy.chunk_records).ok());
  EXPECT_EQ(out[12345], 5.0f);
}

}  // namespace
}  // namespace streampipe::pipeline
