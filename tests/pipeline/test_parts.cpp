// SPDX-License-Identifier: Apache-2.0
// PartQueue and run_parts: every part runs once, on the caller and its helpers; a throwing
// part; helpers that start after their call returned; a host stage's parts on the engine's
// idle workers.

#include "streampipe/pipeline/engine.hpp"
#include "streampipe/pipeline/parts.hpp"
#include "support/thread_spawner.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <mutex>
#include <set>
#include <stdexcept>
#include <thread>
#include <vector>

namespace streampipe::pipeline {
namespace {

using streampipe::testing::ThreadSpawner;

TEST(PartQueue, EveryPartRunsOnceOnTheCallerAndItsHelpers) {
  ThreadSpawner pool;
  PartQueue parts(3, pool.spawner());
  std::vector<std::atomic<int>> runs(500);
  std::mutex mutex;
  std::set<std::thread::id> threads;
  parts.run(runs.size(), [&](std::size_t i) {
    ++runs[i];
    std::this_thread::sleep_for(std::chrono::microseconds(200));
    std::lock_guard lock(mutex);
    threads.insert(std::this_thread::get_id());
  });
  for (std::size_t i = 0; i < runs.size(); ++i) ASSERT_EQ(runs[i].load(), 1) << "part " << i;
  EXPECT_EQ(pool.spawned, 3);
  EXPECT_GT(threads.size(), 1u);
  EXPECT_TRUE(threads.count(std::this_thread::get_id()));  // the caller works too
}

TEST(PartQueue, OnePartOrNoHelpersRunInTurnOnTheCaller) {
  for (const auto& [helpers, count] : {std::pair{4, std::size_t{1}}, std::pair{0, std::size_t{50}}}) {
    ThreadSpawner pool;
    PartQueue parts(helpers, pool.spawner());
    std::vector<std::size_t> order;
    const auto caller = std::this_thread::get_id();
    parts.run(count, [&](std::size_t i) {
      EXPECT_EQ(std::this_thread::get_id(), caller);
      order.push_back(i);
    });
    ASSERT_EQ(order.size(), count);
    for (std::size_t i = 0; i < count; ++i) EXPECT_EQ(order[i], i);
    EXPECT_EQ(pool.spawned, 0);
  }
}

TEST(PartQueue, AThrowingPartSkipsThoseNotStartedAndIsRethrownWhenTheRestHaveFinished) {
  ThreadSpawner pool;
  PartQueue parts(3, pool.spawner());
  std::atomic<int> running{0}, ran{0};
  try {
    parts.run(1000, [&](std::size_t i) {
      ++running;
      std::this_thread::sleep_for(std::chrono::microseconds(100));
      ++ran;
      --running;
      if (i == 3) throw std::runtime_error("part 3 failed");
    });
    FAIL() << "the part's exception was not rethrown";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "part 3 failed");
  }
  EXPECT_EQ(running.load(), 0);  // nothing of the call still runs once it has returned
  EXPECT_LT(ran.load(), 1000);   // the parts not started were skipped
}

TEST(PartQueue, HelpersThatStartAfterTheirCallReturnedFindNothing) {
  // A busy engine runs helpers late: the caller has run every part by then, and its `part`
  // is gone (ASan would see a helper touch it).
  std::vector<std::function<void()>> late;
  PartQueue parts(4, [&](std::function<void()> task) { late.push_back(std::move(task)); });
  std::size_t sum = 0;
  {
    const std::function<void(std::size_t)> part = [&](std::size_t i) { sum += i; };
    parts.run(10, part);
  }
  EXPECT_EQ(sum, 45u);
  ASSERT_EQ(late.size(), 4u);
  for (auto& helper : late) helper();
  EXPECT_EQ(sum, 45u);
}

TEST(PartQueue, ConcurrentCallsEachReturnWithTheirOwnPartsDone) {
  ThreadSpawner pool;
  PartQueue parts(3, pool.spawner());
  constexpr int kCallers = 4;
  std::vector<std::thread> callers;
  std::vector<int> complete(kCallers, 0);
  for (int c = 0; c < kCallers; ++c)
    callers.emplace_back([&, c] {
      for (int round = 0; round < 5; ++round) {
        std::vector<std::atomic<int>> runs(64);
        parts.run(runs.size(), [&](std::size_t i) { ++runs[i]; });
        bool all = true;
        for (auto& r : runs) all = all && r.load() == 1;
        complete[c] += all ? 1 : 0;
      }
    });
  for (auto& t : callers) t.join();
  for (int c = 0; c < kCallers; ++c) EXPECT_EQ(complete[c], 5) << "caller " << c;
}

TEST(RunParts, OutsideAnEngineThePartsRunInTurnOnTheCaller) {
  std::vector<std::size_t> order;
  const auto caller = std::this_thread::get_id();
  run_parts(5, [&](std::size_t i) {
    EXPECT_EQ(std::this_thread::get_id(), caller);
    order.push_back(i);
  });
  EXPECT_EQ(order, (std::vector<std::size_t>{0, 1, 2, 3, 4}));
}

// The engine's operation in these tests: the input copied to the output, on the CPU.
Operation copy_operation() {
  Operation op;
  op.name = "copy";
  op.host = [](const Batch& b) { std::memcpy(b.out(), b.in(), b.in_bytes()); };
  return op;
}

EngineOptions four_workers() {
  EngineOptions o;
  o.backend = Backend::host;
  o.host_threads = 4;
  return o;
}

TEST(RunParts, AHostStagesPartsRunOnTheEnginesIdleWorkers) {
  // One item whose produce and consume each have eight slow parts, on an engine of four
  // idle workers: the parts run on more than the stage's own worker, and every one runs.
  EngineOptions o = four_workers();
  o.lanes = 1;
  o.depth = 1;
  Engine engine(copy_operation(), o);
  std::mutex mutex;
  std::set<std::thread::id> produce_threads, consume_threads;
  std::vector<std::byte> result;
  Item item;
  item.produce = [&](StagingInput& staging) {
    const auto in = staging.allocate(8, 8);
    run_parts(8, [&](std::size_t i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      in[i] = static_cast<std::byte>(i + 1);
      std::lock_guard lock(mutex);
      produce_threads.insert(std::this_thread::get_id());
    });
  };
  item.consume = [&](std::span<const std::byte> out) {
    result.resize(out.size());
    run_parts(out.size(), [&](std::size_t i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      result[i] = out[i];
      std::lock_guard lock(mutex);
      consume_threads.insert(std::this_thread::get_id());
    });
  };
  auto done = engine.submit(std::move(item));
  engine.drain();
  ASSERT_TRUE(done.get().ok());
  for (std::size_t i = 0; i < 8; ++i) EXPECT_EQ(static_cast<int>(result.at(i)), static_cast<int>(i + 1));
  EXPECT_GT(produce_threads.size(), 1u);
  EXPECT_GT(consume_threads.size(), 1u);
  EXPECT_LE(produce_threads.size(), 4u);
}

TEST(RunParts, AThrowingPartFailsOnlyItsItem) {
  Engine engine(copy_operation(), four_workers());
  std::vector<std::future<ItemResult>> results;
  for (int k = 0; k < 6; ++k) {
    Item item;
    item.label = "group-" + std::to_string(k);
    item.produce = [k](StagingInput& staging) {
      const auto in = staging.allocate(4, 4);
      run_parts(4, [&](std::size_t i) {
        if (k == 2 && i == 1) throw std::runtime_error("file 1 of group 2 is corrupt");
        in[i] = std::byte{7};
      });
    };
    item.consume = [](std::span<const std::byte>) {};
    results.push_back(engine.submit(std::move(item)));
  }
  engine.drain();
  for (int k = 0; k < 6; ++k) {
    const ItemResult r = results[static_cast<std::size_t>(k)].get();
    if (k == 2) {
      EXPECT_EQ(r.status, ItemStatus::failed);
      EXPECT_NE(r.error.find("file 1 of group 2 is corrupt"), std::string::npos) << r.error;
    } else {
      EXPECT_TRUE(r.ok()) << r.error;
    }
  }
}

}  // namespace
}  // namespace streampipe::pipeline
