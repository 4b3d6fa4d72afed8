// SPDX-License-Identifier: Apache-2.0
#pragma once
// What the engine's fault tests on the host and on the GPU share: the shapes they run in
// (delivery order x items per batch), a count of deliveries per item index, an item whose
// consume stage keeps what it got, a run whose callback throws, and items submitted from
// many threads while cancel() comes. Waits are bounded (bounded.hpp): a hang fails the test.

#include "bounded.hpp"

#include "streampipe/pipeline/engine.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <functional>
#include <future>
#include <span>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace streampipe::testing {

struct Shape {
  pipeline::Delivery delivery;
  int batch_items;
};

// "InOrderBatch4", "AsCompletedBatch1", ...
inline std::string shape_name(const ::testing::TestParamInfo<Shape>& info) {
  return std::string(info.param.delivery == pipeline::Delivery::in_order ? "InOrder" : "AsCompleted") + "Batch" +
         std::to_string(info.param.batch_items);
}

// An engine of `lanes` x `depth` on `backend`, in the shape's delivery and batching.
inline pipeline::EngineOptions shape_options(const Shape& shape, pipeline::Backend backend, int lanes, int depth) {
  pipeline::EngineOptions o;
  o.backend = backend;
  o.lanes = lanes;
  o.depth = depth;
  o.delivery = shape.delivery;
  o.batch_items = shape.batch_items;
  return o;
}

// Counts how often each index was delivered to the callback.
struct Deliveries {
  std::vector<std::atomic<int>> count;
  explicit Deliveries(std::size_t n) : count(n) {}

  // Counts the result's index, then throws for the indices `throws_for` names (none if empty).
  std::function<void(const pipeline::ItemResult&)> callback(std::function<bool(std::size_t)> throws_for = {}) {
    return [this, throws_for = std::move(throws_for)](const pipeline::ItemResult& r) {
      ASSERT_LT(r.index, count.size());
      ++count[r.index];
      if (throws_for && throws_for(r.index)) throw std::runtime_error("injected callback failure");
    };
  }
  // Indices 0 .. first - 1 were each delivered exactly once.
  void expect_each_once(std::size_t first) const {
    for (std::size_t i = 0; i < first; ++i) EXPECT_EQ(count[i].load(), 1) << "item " << i;
  }
  void expect_each_once() const { expect_each_once(count.size()); }
};

// An item of input `in` whose consume stage keeps what it got in `*got` (drops it if null).
inline pipeline::Item consumed_into(std::span<const std::byte> in, std::vector<std::byte>* got) {
  pipeline::Item item;
  item.in = in;
  item.consume = [got](std::span<const std::byte> bytes) {
    if (got != nullptr) got->assign(bytes.begin(), bytes.end());
  };
  return item;
}

struct FaultyRun {
  std::vector<std::future<pipeline::ItemResult>> futures;  // by item index
  pipeline::RunStats stats;
};

// Submits items 0 .. n - 1 (`make(i)`) and drains twice: the first drain() must throw the
// first callback's exception (once every item is delivered), the second gives the stats.
inline FaultyRun run_past_a_callback_failure(pipeline::Engine& engine, std::size_t n,
                                             const std::function<pipeline::Item(std::size_t)>& make) {
  FaultyRun run;
  for (std::size_t i = 0; i < n; ++i) run.futures.push_back(engine.submit(make(i)));
  finishes_within("drain()", [&] { EXPECT_THROW((void)engine.drain(), std::runtime_error); });
  finishes_within("the second drain()", [&] { run.stats = engine.drain(); });
  return run;
}

struct Submitted {
  std::future<pipeline::ItemResult> future;
  std::size_t item;
};

// Items 0 .. threads * per_thread - 1 (`make(i)`), thread t submitting the t-th run of
// `per_thread`, while cancel() comes after `cancel_after`. Each thread's submissions, in order.
inline std::vector<std::vector<Submitted>> submit_from_threads_while_cancelling(
    pipeline::Engine& engine, int threads, int per_thread, std::chrono::microseconds cancel_after,
    const std::function<pipeline::Item(std::size_t)>& make) {
  std::vector<std::vector<Submitted>> submitted(static_cast<std::size_t>(threads));
  finishes_within("submitting while cancel() runs", [&] {
    std::vector<std::thread> workers;
    for (int t = 0; t < threads; ++t)
      workers.emplace_back([&, t] {
        for (int k = 0; k < per_thread; ++k) {
          const std::size_t i = static_cast<std::size_t>(t * per_thread + k);
          submitted[static_cast<std::size_t>(t)].push_back({engine.submit(make(i)), i});
        }
      });
    std::this_thread::sleep_for(cancel_after);
    engine.cancel();
    for (auto& w : workers) w.join();
  });
  return submitted;
}

}  // namespace streampipe::testing
