// SPDX-License-Identifier: Apache-2.0
// Faults in the middle of a run, on the host backend: operations, host stages and callbacks
// that throw, items that the operation refuses at submit(), cancel() racing submit() from
// many threads, callbacks that submit after cancel(). Whatever fails, every item is
// resolved exactly once (its callback counted per index), nothing hangs (every wait is
// bounded: a hang fails the test), and the engine's destructor returns.

#include "bounded.hpp"
#include "engine_faults.hpp"
#include "fault_plan.hpp"

#include "streampipe/pipeline/engine.hpp"

#include <gtest/gtest.h>

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace streampipe::pipeline {
namespace {

using testing::finishes_within;
using testing::result_within;

// What is injected into item i: a fixed pseudo-random plan, so a failure is reproducible.
enum class Fault { none, operation, operation_non_std, produce, consume, callback };

Fault fault_of(std::size_t i) {
  constexpr std::array faults{Fault::operation, Fault::operation_non_std, Fault::produce, Fault::consume,
                              Fault::callback};
  return testing::planned_fault(i, 0x2545F4914F6CDD1Dull, 16, faults);
}

// Item kinds by index: a produce and consume pair, a span input with a consume stage, or
// span to span (the only kind that batches).
enum class Kind { stages, span_consume, spans };
Kind kind_of(std::size_t i) { return static_cast<Kind>(i % 3); }

std::vector<std::byte> input_of(std::size_t i) {
  std::vector<std::byte> v(1 + (i * 37) % 700);
  for (std::size_t k = 0; k < v.size(); ++k) v[k] = static_cast<std::byte>((i * 31 + k) & 255);
  return v;
}

// What the error of an item failed by its own fault says.
std::string expected_error(Fault f) {
  switch (f) {
    case Fault::operation: return "operation 'add one' failed: injected operation failure";
    case Fault::operation_non_std: return "operation 'add one' failed: unknown exception";
    case Fault::produce: return "host stage 'produce' failed: injected produce failure";
    case Fault::consume: return "host stage 'consume' failed: injected consume failure";
    default: return "(no fault)";
  }
}

bool plus_one(std::span<const std::byte> in, std::span<const std::byte> out) {
  if (in.size() != out.size()) return false;
  for (std::size_t k = 0; k < in.size(); ++k)
    if (static_cast<unsigned char>(out[k]) != static_cast<unsigned char>(static_cast<unsigned char>(in[k]) + 1))
      return false;
  return true;
}

// out = in + 1 per byte; throws for a batch holding an item whose fault is in the operation.
// `delay` keeps work in flight while other threads submit or cancel.
Operation faulty_add_one(bool inject, std::chrono::microseconds delay = {}) {
  Operation op;
  op.name = "add one";
  op.output_bytes = [](std::size_t n) { return n; };
  op.host = [inject, delay](const Batch& b) {
    if (delay.count() > 0) std::this_thread::sleep_for(delay);
    for (std::size_t k = 0; inject && k < b.size(); ++k) {
      if (fault_of(b.index(k)) == Fault::operation) throw std::runtime_error("injected operation failure");
      if (fault_of(b.index(k)) == Fault::operation_non_std) throw 42;
    }
    for (std::size_t k = 0; k < b.size(); ++k) {
      const auto& d = b.items()[k];
      for (std::size_t i = 0; i < d.in_bytes; ++i)
        b.out()[d.out_offset + i] = static_cast<std::byte>(static_cast<unsigned char>(b.in()[d.in_offset + i]) + 1);
    }
  };
  return op;
}

// The inputs and outputs of a run's items, by submission order.
struct Items {
  std::vector<std::vector<std::byte>> in, out;
  explicit Items(std::size_t n) : in(n), out(n) {
    for (std::size_t i = 0; i < n; ++i) {
      in[i] = input_of(i);
      out[i].assign(in[i].size(), std::byte{0xEE});
    }
  }

  // Item i of its kind, with its faults if `inject`. Consume stages write out[i].
  Item make(std::size_t i, bool inject) {
    Item item;
    item.label = "item-" + std::to_string(i);
    const Fault f = inject ? fault_of(i) : Fault::none;
    std::vector<std::byte>* out_i = &out[i];
    const auto consume = [out_i, f](std::span<const std::byte> got) {
      if (f == Fault::consume) throw std::runtime_error("injected consume failure");
      out_i->assign(got.begin(), got.end());
    };
    switch (kind_of(i)) {
      case Kind::stages: {
        const std::vector<std::byte>* in_i = &in[i];
        item.produce = [in_i, f](StagingInput& staging) {
          if (f == Fault::produce) throw std::runtime_error("injected produce failure");
          auto span = staging.allocate(in_i->size(), in_i->size());
          std::copy(in_i->begin(), in_i->end(), span.begin());
        };
        item.consume = consume;
        break;
      }
      case Kind::span_consume:
        item.in = in[i];
        item.consume = consume;
        break;
      case Kind::spans:
        item.in = in[i];
        item.out = out[i];
        break;
    }
    return item;
  }
};

class EngineFaultsHost : public ::testing::TestWithParam<testing::Shape> {
 protected:
  [[nodiscard]] EngineOptions options(int lanes = 3, int depth = 2) const {
    EngineOptions o = testing::shape_options(GetParam(), Backend::host, lanes, depth);
    o.host_threads = 3;
    return o;
  }
};

// Issue 24, class 5: a consume stage on a span input whose size the operation refuses.
// submit() used to ask output_bytes after counting the item, rethrow, and leave it pending:
// drain() and the destructor then waited forever.
TEST_P(EngineFaultsHost, AnItemTheOperationRefusesAtSubmitIsNotLeftPending) {
  Operation op = faulty_add_one(false);
  op.output_bytes = [](std::size_t n) {
    if (n % 2 != 0) throw std::domain_error("odd input of " + std::to_string(n) + " bytes");
    return n;
  };
  testing::Deliveries delivered(2);
  auto o = options();
  o.on_complete = delivered.callback();
  auto engine = std::make_unique<Engine>(op, o);
  std::vector<std::byte> odd(7), even(8), out(8);
  EXPECT_THROW((void)engine->submit(testing::consumed_into(odd, nullptr)), std::domain_error);

  std::vector<std::byte> consumed;
  auto f0 = engine->submit(testing::consumed_into(even, &consumed));
  auto f1 = engine->submit(make_item(std::span<const std::byte>(even), std::span<std::byte>(out)));
  RunStats stats;
  finishes_within("drain()", [&] { stats = engine->drain(); });
  EXPECT_EQ(stats.submitted, 2u);
  EXPECT_EQ(stats.done, 2u);
  const auto r0 = result_within(f0), r1 = result_within(f1);
  ASSERT_TRUE(r0 && r1);
  EXPECT_TRUE(r0->ok()) << r0->error;
  EXPECT_EQ(r0->index, 0u);  // the refused item took no index
  EXPECT_TRUE(r1->ok()) << r1->error;
  EXPECT_TRUE(plus_one(even, consumed));
  delivered.expect_each_once();
  finishes_within("the destructor", [&] { engine.reset(); });
}

// Operations (std and non-std exceptions), produce and consume stages and callbacks fail at
// random; each item ends once, failed for its own fault or its batch's, or done and right.
TEST_P(EngineFaultsHost, FaultsMidRunResolveEveryItemExactlyOnce) {
  constexpr std::size_t kItems = 1500;
  Items items(kItems);
  testing::Deliveries delivered(kItems);
  auto o = options();
  o.on_complete = delivered.callback([](std::size_t i) { return fault_of(i) == Fault::callback; });
  auto engine = std::make_unique<Engine>(faulty_add_one(true), o);
  auto [futures, stats] =
      testing::run_past_a_callback_failure(*engine, kItems, [&items](std::size_t i) { return items.make(i, true); });
  EXPECT_EQ(stats.submitted, kItems);
  EXPECT_EQ(stats.done + stats.failed, kItems);
  EXPECT_EQ(stats.cancelled, 0u);

  std::size_t failed = 0;
  for (std::size_t i = 0; i < kItems; ++i) {
    const auto r = result_within(futures[i]);
    ASSERT_TRUE(r);
    EXPECT_EQ(r->index, i);
    const Fault f = fault_of(i);
    const bool own = f == Fault::operation || f == Fault::operation_non_std ||
                     (f == Fault::produce && kind_of(i) == Kind::stages) ||
                     (f == Fault::consume && kind_of(i) != Kind::spans);
    if (r->ok()) {
      EXPECT_FALSE(own) << "item " << i << " was injected a fault but is done";
      EXPECT_TRUE(plus_one(items.in[i], items.out[i])) << "item " << i;
      continue;
    }
    ++failed;
    EXPECT_EQ(r->status, ItemStatus::failed) << r->error;
    EXPECT_TRUE(r->exception) << r->error;
    EXPECT_NE(r->error.find("item " + std::to_string(i) + " (item-" + std::to_string(i) + ")"), std::string::npos)
        << r->error;
    // Its own fault, or that of an item sharing its batch: the operation fails the batch.
    const bool batch_mate = r->error.find("operation 'add one' failed") != std::string::npos;
    EXPECT_TRUE(batch_mate || (own && r->error.find(expected_error(f)) != std::string::npos))
        << "item " << i << " failed without a fault of its own or of its batch: " << r->error;
  }
  EXPECT_EQ(failed, stats.failed);
  EXPECT_GT(failed, kItems / 10);  // the plan injects about a quarter
  delivered.expect_each_once();
  finishes_within("the destructor", [&] { engine.reset(); });
}

// cancel() at a random moment while eight threads submit: each item is done (and right) or
// cancelled, delivered once; submits after the cancel end at once.
TEST_P(EngineFaultsHost, CancelRacingSubmitsFromManyThreadsResolvesEveryItemOnce) {
  constexpr int kThreads = 8, kPerThread = 120;
  constexpr std::size_t kItems = kThreads * kPerThread;
  std::mt19937 rng(24);
  for (int round = 0; round < 6; ++round) {
    Items items(kItems);
    testing::Deliveries delivered(kItems + 1);  // and one submitted after the cancel
    auto o = options(2, 2);
    o.on_complete = delivered.callback();
    auto engine = std::make_unique<Engine>(faulty_add_one(false, std::chrono::microseconds(200)), o);
    const auto cancel_after = std::chrono::microseconds(std::uniform_int_distribution<int>(0, 8000)(rng));
    auto per_thread = testing::submit_from_threads_while_cancelling(
        *engine, kThreads, kPerThread, cancel_after, [&items](std::size_t i) { return items.make(i, false); });
    RunStats stats;
    finishes_within("drain()", [&] { stats = engine->drain(); });
    EXPECT_EQ(stats.submitted, kItems);
    EXPECT_EQ(stats.done + stats.cancelled, kItems) << "round " << round;
    std::size_t done = 0;
    for (auto& list : per_thread)
      for (auto& s : list) {
        const auto r = result_within(s.future);
        ASSERT_TRUE(r);
        if (r->ok()) {
          ++done;
          EXPECT_TRUE(plus_one(items.in[s.item], items.out[s.item])) << "item " << s.item;
        } else {
          EXPECT_EQ(r->status, ItemStatus::cancelled) << r->error;
          EXPECT_NE(r->error.find("cancelled"), std::string::npos) << r->error;
        }
      }
    EXPECT_EQ(done, stats.done);
    auto late = engine->submit(items.make(0, false));
    const auto r = result_within(late);
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, ItemStatus::cancelled);
    delivered.expect_each_once();
    finishes_within("the destructor", [&] { engine.reset(); });
  }
}

// A callback that submits after cancel(): the submit ends its item at once and delivers it
// from inside the callback. In order, delivery used to run callbacks under its lock, and
// that nested delivery waited for the lock its own thread held: a deadlock. The operation
// waits at a gate until the cancel, so every callback, and every submit from one, comes
// after it.
TEST_P(EngineFaultsHost, CallbacksMaySubmitAfterCancel) {
  constexpr std::size_t kFirst = 12, kChained = 40, kAll = kFirst + kChained;
  Items items(kAll);
  std::mutex m;
  std::vector<std::future<ItemResult>> chained;
  std::atomic<std::size_t> next{kFirst};
  testing::Deliveries delivered(kAll);
  const auto count = delivered.callback();
  Engine* self = nullptr;
  auto o = options(1, static_cast<int>(kFirst));  // a slot for each first item: no submit waits
  o.on_complete = [&](const ItemResult& r) {
    count(r);
    const std::size_t i = next++;
    if (i >= kAll) return;
    auto f = self->submit(items.make(i, false));
    std::lock_guard lock(m);
    chained.push_back(std::move(f));
  };
  std::atomic<bool> gate{false};
  Operation op = faulty_add_one(false);
  op.host = [&gate, base = op.host](const Batch& b) {
    while (!gate.load()) std::this_thread::sleep_for(std::chrono::microseconds(100));
    base(b);
  };
  auto engine = std::make_unique<Engine>(op, o);
  self = engine.get();
  std::vector<std::future<ItemResult>> first;
  for (std::size_t i = 0; i < kFirst; ++i) first.push_back(engine->submit(items.make(i, false)));
  finishes_within("cancel() with callbacks submitting", [&] { engine->cancel(); });
  gate = true;
  RunStats stats;
  finishes_within("drain() with callbacks submitting after cancel()", [&] { stats = engine->drain(); });
  EXPECT_EQ(stats.submitted, kAll);
  EXPECT_EQ(stats.done + stats.cancelled, kAll);
  for (auto& f : first) ASSERT_TRUE(result_within(f));
  std::lock_guard lock(m);
  ASSERT_EQ(chained.size(), kChained);
  for (auto& f : chained) {
    const auto r = result_within(f);
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, ItemStatus::cancelled) << r->error;
  }
  delivered.expect_each_once();
  finishes_within("the destructor", [&] { engine.reset(); });
}

INSTANTIATE_TEST_SUITE_P(Shapes, EngineFaultsHost,
                         ::testing::Values(testing::Shape{Delivery::as_completed, 1},
                                           testing::Shape{Delivery::in_order, 1},
                                           testing::Shape{Delivery::as_completed, 4},
                                           testing::Shape{Delivery::in_order, 4}),
                         testing::shape_name);

}  // namespace
}  // namespace streampipe::pipeline
