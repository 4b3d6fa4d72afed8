// SPDX-License-Identifier: Apache-2.0
// The engine's logic on the host backend: ordering, backpressure, batching, host stages,
// errors that name their item, cancellation. The same code drives the GPU lanes.

#include "streampipe/pipeline/engine.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <numeric>
#include <random>
#include <set>
#include <thread>

namespace streampipe::pipeline {
namespace {

// out[i] = in[i] + 1 for every byte of every item of the batch; optionally slow or failing.
Operation add_one(std::atomic<int>* concurrent = nullptr, std::atomic<int>* peak = nullptr,
                  std::chrono::microseconds delay = {}, std::size_t fail_index = SIZE_MAX) {
  Operation op;
  op.name = "add one";
  op.output_bytes = [](std::size_t n) { return n; };
  op.host = [=](const Batch& b) {
    if (concurrent) {
      const int now = ++*concurrent;
      int p = peak->load();
      while (now > p && !peak->compare_exchange_weak(p, now)) {}
    }
    if (delay.count()) std::this_thread::sleep_for(delay);
    for (std::size_t k = 0; k < b.size(); ++k) {
      if (b.index(k) == fail_index) {
        if (concurrent) --*concurrent;
        throw std::runtime_error("boom");
      }
      const auto& d = b.items()[k];
      for (std::size_t i = 0; i < d.in_bytes; ++i)
        b.out()[d.out_offset + i] = static_cast<std::byte>(static_cast<unsigned char>(b.in()[d.in_offset + i]) + 1);
    }
    if (concurrent) --*concurrent;
  };
  return op;
}

std::vector<std::byte> random_bytes(std::size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::vector<std::byte> v(n);
  for (auto& b : v) b = static_cast<std::byte>(rng());
  return v;
}

void expect_plus_one(const std::vector<std::byte>& in, const std::vector<std::byte>& out) {
  ASSERT_EQ(in.size(), out.size());
  for (std::size_t i = 0; i < in.size(); ++i)
    ASSERT_EQ(static_cast<unsigned char>(out[i]), static_cast<unsigned char>(static_cast<unsigned char>(in[i]) + 1)) << i;
}

EngineOptions host_options(int lanes = 3, int depth = 2) {
  EngineOptions o;
  o.backend = Backend::host;
  o.lanes = lanes;
  o.depth = depth;
  o.host_threads = 3;
  return o;
}

TEST(EngineHost, ProcessesItemsOfDifferentSizes) {
  Engine engine(add_one(), host_options());
  EXPECT_TRUE(engine.device_set().cpu);
  EXPECT_TRUE(engine.device_set().gpus.empty());
  std::vector<std::vector<std::byte>> in, out;
  for (std::size_t i = 0; i < 40; ++i) {
    in.push_back(random_bytes(1 + i * 977, static_cast<unsigned>(i)));
    out.emplace_back(in.back().size(), std::byte{0});
  }
  std::vector<std::future<ItemResult>> futures;
  for (std::size_t i = 0; i < in.size(); ++i)
    futures.push_back(engine.submit(make_item(std::span<const std::byte>(in[i]), std::span<std::byte>(out[i]))));
  const auto stats = engine.drain();
  EXPECT_EQ(stats.submitted, 40u);
  EXPECT_EQ(stats.done, 40u);
  for (std::size_t i = 0; i < in.size(); ++i) {
    const auto r = futures[i].get();
    EXPECT_TRUE(r.ok()) << r.error;
    EXPECT_EQ(r.index, i);
    expect_plus_one(in[i], out[i]);
  }
}

TEST(EngineHost, InOrderDeliveryCallsBackInSubmissionOrder) {
  std::vector<std::size_t> order;
  std::mutex m;
  auto o = host_options(4, 2);
  o.delivery = Delivery::in_order;
  o.on_complete = [&](const ItemResult& r) {
    std::lock_guard lock(m);
    order.push_back(r.index);
  };
  // Early items are slower, so completion order differs from submission order.
  Operation op = add_one();
  auto base = op.host;
  op.host = [base](const Batch& b) {
    std::this_thread::sleep_for(std::chrono::microseconds(b.index(0) % 4 == 0 ? 3000 : 0));
    base(b);
  };
  Engine engine(op, o);
  std::vector<std::vector<std::byte>> in(30, random_bytes(1000, 1)), out(30, std::vector<std::byte>(1000));
  for (std::size_t i = 0; i < in.size(); ++i)
    (void)engine.submit(make_item(std::span<const std::byte>(in[i]), std::span<std::byte>(out[i])));
  engine.drain();
  std::vector<std::size_t> want(30);
  std::iota(want.begin(), want.end(), 0);
  EXPECT_EQ(order, want);
}

TEST(EngineHost, BackpressureBoundsWorkInFlight) {
  std::atomic<int> concurrent{0}, peak{0};
  Engine engine(add_one(&concurrent, &peak, std::chrono::milliseconds(40)), host_options(2, 1));
  std::vector<std::vector<std::byte>> in(5, random_bytes(256, 2)), out(5, std::vector<std::byte>(256));
  std::vector<double> submit_ms;
  for (std::size_t i = 0; i < in.size(); ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    (void)engine.submit(make_item(std::span<const std::byte>(in[i]), std::span<std::byte>(out[i])));
    submit_ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  engine.drain();
  // Two slots (2 lanes x depth 1): the first two submits return at once, the third waits
  // until an operation of 40 ms has finished and released its slot.
  EXPECT_LT(submit_ms[0], 20.0);
  EXPECT_LT(submit_ms[1], 20.0);
  EXPECT_GT(submit_ms[2], 25.0);
  EXPECT_EQ(peak.load(), 2);  // the two lanes ran concurrently, never more
  for (std::size_t i = 0; i < in.size(); ++i) expect_plus_one(in[i], out[i]);
}

TEST(EngineHost, BatchingPacksSmallItemsIntoOneCall) {
  std::atomic<int> calls{0};
  std::atomic<std::size_t> biggest{0};
  Operation op = add_one();
  auto base = op.host;
  op.host = [&, base](const Batch& b) {
    ++calls;
    biggest = std::max(biggest.load(), b.size());
    // Every item's region is aligned and inside the batch.
    for (const auto& d : b.items()) {
      EXPECT_EQ(d.in_offset % 256, 0u);
      EXPECT_LE(d.in_offset + d.in_bytes, b.in_bytes());
      EXPECT_LE(d.out_offset + d.out_bytes, b.out_bytes());
    }
    base(b);
  };
  auto o = host_options(2, 2);
  o.batch_items = 16;
  Engine engine(op, o);
  std::vector<std::vector<std::byte>> in, out;
  for (int i = 0; i < 100; ++i) {
    in.push_back(random_bytes(static_cast<std::size_t>(1 + i % 37), static_cast<unsigned>(i)));
    out.emplace_back(in.back().size());
  }
  std::vector<std::future<ItemResult>> futures;
  for (std::size_t i = 0; i < in.size(); ++i)
    futures.push_back(engine.submit(make_item(std::span<const std::byte>(in[i]), std::span<std::byte>(out[i]))));
  engine.drain();
  for (std::size_t i = 0; i < in.size(); ++i) {
    EXPECT_TRUE(futures[i].get().ok());
    expect_plus_one(in[i], out[i]);
  }
  EXPECT_EQ(biggest.load(), 16u);
  EXPECT_EQ(calls.load(), 7);  // 6 full batches of 16 and the flushed rest of 4
}

TEST(EngineHost, ProduceAndConsumeStagesRunAroundTheDevice) {
  Engine engine(add_one(), host_options());
  std::vector<std::vector<std::byte>> results(20);
  std::vector<std::future<ItemResult>> futures;
  for (std::size_t i = 0; i < 20; ++i) {
    Item item;
    item.label = "generated-" + std::to_string(i);
    item.produce = [i](StagingInput& staging) {
      auto in = staging.allocate(100 + i, 100 + i);
      for (std::size_t k = 0; k < in.size(); ++k) in[k] = static_cast<std::byte>(k + i);
    };
    item.consume = [&results, i](std::span<const std::byte> out) { results[i].assign(out.begin(), out.end()); };
    futures.push_back(engine.submit(std::move(item)));
  }
  engine.drain();
  for (std::size_t i = 0; i < 20; ++i) {
    ASSERT_TRUE(futures[i].get().ok());
    ASSERT_EQ(results[i].size(), 100 + i);
    for (std::size_t k = 0; k < results[i].size(); ++k)
      ASSERT_EQ(static_cast<unsigned char>(results[i][k]), static_cast<unsigned char>(k + i + 1));
  }
}

TEST(EngineHost, FailingOperationNamesItsItemAndOthersFinish) {
  Engine engine(add_one(nullptr, nullptr, {}, 7), host_options());
  std::vector<std::vector<std::byte>> in(15, random_bytes(64, 3)), out(15, std::vector<std::byte>(64, std::byte{0xEE}));
  std::vector<std::future<ItemResult>> futures;
  for (std::size_t i = 0; i < in.size(); ++i) {
    auto item = make_item(std::span<const std::byte>(in[i]), std::span<std::byte>(out[i]));
    item.label = "array-" + std::to_string(i);
    futures.push_back(engine.submit(std::move(item)));
  }
  const auto stats = engine.drain();
  EXPECT_EQ(stats.failed, 1u);
  EXPECT_EQ(stats.done, 14u);
  for (std::size_t i = 0; i < in.size(); ++i) {
    const auto r = futures[i].get();
    if (i == 7) {
      EXPECT_EQ(r.status, ItemStatus::failed);
      EXPECT_NE(r.error.find("item 7 (array-7)"), std::string::npos) << r.error;
      EXPECT_NE(r.error.find("boom"), std::string::npos) << r.error;
      EXPECT_NE(r.error.find("add one"), std::string::npos) << r.error;
      EXPECT_TRUE(r.exception);
      // Not reported done, and its output was not written.
      EXPECT_EQ(out[i][0], std::byte{0xEE});
    } else {
      EXPECT_TRUE(r.ok()) << r.error;
      expect_plus_one(in[i], out[i]);
    }
  }
}

TEST(EngineHost, FailingHostStagesAreReportedPerItem) {
  Engine engine(add_one(), host_options());
  Item bad_produce;
  bad_produce.label = "corrupt.png";
  bad_produce.produce = [](StagingInput&) { throw std::runtime_error("not a PNG file"); };
  bad_produce.consume = [](std::span<const std::byte>) {};
  Item bad_consume;
  bad_consume.label = "unwritable";
  bad_consume.produce = [](StagingInput& s) { (void)s.allocate(10, 10); };
  bad_consume.consume = [](std::span<const std::byte>) { throw std::runtime_error("disk full"); };
  std::vector<std::byte> in = random_bytes(32, 4), out(32);
  auto f1 = engine.submit(std::move(bad_produce));
  auto f2 = engine.submit(std::move(bad_consume));
  auto f3 = engine.submit(make_item(std::span<const std::byte>(in), std::span<std::byte>(out)));
  engine.drain();
  const auto r1 = f1.get(), r2 = f2.get(), r3 = f3.get();
  EXPECT_EQ(r1.status, ItemStatus::failed);
  EXPECT_NE(r1.error.find("corrupt.png"), std::string::npos);
  EXPECT_NE(r1.error.find("not a PNG file"), std::string::npos);
  EXPECT_EQ(r2.status, ItemStatus::failed);
  EXPECT_NE(r2.error.find("disk full"), std::string::npos);
  EXPECT_TRUE(r3.ok());
  expect_plus_one(in, out);
}

TEST(EngineHost, MalformedItemsAreRejectedAtSubmit) {
  Engine engine(add_one(), host_options());
  std::vector<std::byte> in(10), out(9), empty;
  EXPECT_THROW((void)engine.submit(make_item(std::span<const std::byte>(empty), std::span<std::byte>(out))), std::invalid_argument);
  try {
    (void)engine.submit(make_item(std::span<const std::byte>(in), std::span<std::byte>(out)));
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("output is 9 bytes"), std::string::npos) << e.what();
  }
  Item both;
  both.in = std::as_bytes(std::span(in));
  both.produce = [](StagingInput&) {};
  EXPECT_THROW((void)engine.submit(std::move(both)), std::invalid_argument);
  EXPECT_EQ(engine.drain().submitted, 0u);
}

TEST(EngineHost, CancelStopsWorkNotYetStarted) {
  std::atomic<int> ran{0};
  Operation op = add_one();
  auto base = op.host;
  op.host = [&, base](const Batch& b) {
    ++ran;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    base(b);
  };
  Engine engine(op, host_options(1, 1));
  std::vector<std::vector<std::byte>> in(8, random_bytes(16, 5)), out(8, std::vector<std::byte>(16, std::byte{0xEE}));
  std::vector<std::future<ItemResult>> futures;
  std::thread canceller([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(30));
    engine.cancel();
  });
  for (std::size_t i = 0; i < in.size(); ++i)
    futures.push_back(engine.submit(make_item(std::span<const std::byte>(in[i]), std::span<std::byte>(out[i]))));
  canceller.join();
  const auto stats = engine.drain();
  EXPECT_EQ(stats.submitted, 8u);
  EXPECT_EQ(stats.done + stats.cancelled + stats.failed, 8u);
  EXPECT_GE(stats.cancelled, 1u);
  EXPECT_LT(ran.load(), 8);
  for (std::size_t i = 0; i < in.size(); ++i) {
    const auto r = futures[i].get();
    if (r.ok()) {
      expect_plus_one(in[i], out[i]);
    } else {
      EXPECT_EQ(r.status, ItemStatus::cancelled);
      EXPECT_NE(r.error.find("cancelled"), std::string::npos);
    }
  }
  // After cancel, submits complete at once as cancelled.
  auto late = engine.submit(make_item(std::span<const std::byte>(in[0]), std::span<std::byte>(out[0])));
  EXPECT_EQ(late.get().status, ItemStatus::cancelled);
}

TEST(EngineHost, CallbackMaySubmitMoreWork) {
  auto o = host_options(1, 1);
  std::vector<std::byte> in = random_bytes(64, 6);
  std::vector<std::vector<std::byte>> out(10, std::vector<std::byte>(64));
  std::atomic<std::size_t> next{1};
  Engine* self = nullptr;
  o.on_complete = [&](const ItemResult&) {
    const std::size_t i = next++;
    if (i < out.size()) (void)self->submit(make_item(std::span<const std::byte>(in), std::span<std::byte>(out[i])));
  };
  Engine engine(add_one(), o);
  self = &engine;
  (void)engine.submit(make_item(std::span<const std::byte>(in), std::span<std::byte>(out[0])));
  // Chained submits happen on engine threads; wait until the chain is complete.
  for (int spin = 0; spin < 2000 && next.load() < out.size() + 1; ++spin)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  engine.drain();
  for (auto& o2 : out) expect_plus_one(in, o2);
}

TEST(EngineHost, OperationWithoutHostFormIsRefused) {
  Operation op;
  op.name = "gpu only";
  op.device = [](const Batch&) {};
  auto o = host_options();
  try {
    Engine engine(op, o);
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("gpu only"), std::string::npos);
  }
  o.lanes = 0;
  EXPECT_THROW(Engine(add_one(), o), std::invalid_argument);
}

TEST(EngineHost, TimelineRecordsEveryStage) {
  Engine engine(add_one(), host_options());
  std::vector<std::vector<std::byte>> in(12, random_bytes(4096, 7)), out(12, std::vector<std::byte>(4096));
  for (std::size_t i = 0; i < in.size(); ++i)
    (void)engine.submit(make_item(std::span<const std::byte>(in[i]), std::span<std::byte>(out[i])));
  engine.drain();
  const auto rep = engine.timeline().report();
  EXPECT_EQ(rep.items, 12u);
  EXPECT_EQ(rep.bytes_in, 12u * 4096);
  EXPECT_EQ(rep.bytes_out, 12u * 4096);
  EXPECT_GT(rep.wall_ms, 0.0);
  EXPECT_GT(rep.overlap_efficiency, 0.0);
  EXPECT_LE(rep.overlap_efficiency, 1.0 + 1e-9);
  std::set<Stage> seen;
  for (const auto& s : rep.stages) seen.insert(s.stage);
  EXPECT_TRUE(seen.count(Stage::h2d) && seen.count(Stage::compute) && seen.count(Stage::d2h));
}

TEST(EngineHost, ManyThreadsSubmitConcurrently) {
  auto o = host_options(4, 2);
  o.batch_items = 4;
  Engine engine(add_one(), o);
  constexpr int kThreads = 4, kPer = 50;
  std::vector<std::vector<std::byte>> in(kThreads * kPer), out(kThreads * kPer);
  for (std::size_t i = 0; i < in.size(); ++i) {
    in[i] = random_bytes(1 + i % 300, static_cast<unsigned>(i));
    out[i].resize(in[i].size());
  }
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      for (int k = 0; k < kPer; ++k) {
        const std::size_t i = static_cast<std::size_t>(t * kPer + k);
        (void)engine.submit(make_item(std::span<const std::byte>(in[i]), std::span<std::byte>(out[i])));
      }
    });
  for (auto& th : threads) th.join();
  const auto stats = engine.drain();
  EXPECT_EQ(stats.done, in.size());
  for (std::size_t i = 0; i < in.size(); ++i) expect_plus_one(in[i], out[i]);
}

}  // namespace
}  // namespace streampipe::pipeline
