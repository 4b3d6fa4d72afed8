// SPDX-License-Identifier: Apache-2.0
// An engine's own threads may submit but never wait on it (issue 36, class 7): drain() from
// a callback or a host form, or a submit there that finds no slot free, throws
// std::logic_error instead of waiting for the thread itself. Also the bounds of the options
// (class 17) and a thread that cannot start (class 9).

#include "streampipe/pipeline/engine.hpp"

#include "bounded.hpp"
#include "support/sanitizers.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <mutex>
#include <string>
#include <sys/resource.h>
#include <system_error>
#include <vector>

namespace streampipe::pipeline {
namespace {

using streampipe::testing::finishes_within;
using streampipe::testing::result_within;

Operation copy_op() {
  Operation op;
  op.name = "copy";
  op.output_bytes = [](std::size_t n) { return n; };
  op.host = [](const Batch& b) { std::memcpy(b.out(), b.in(), b.in_bytes()); };
  return op;
}

EngineOptions one_slot() {
  EngineOptions o;
  o.backend = Backend::host;
  o.lanes = 1;
  o.depth = 1;
  o.host_threads = 2;
  return o;
}

struct Buffers {
  std::vector<std::vector<std::byte>> in, out;
  explicit Buffers(std::size_t n) : in(n, std::vector<std::byte>(64, std::byte{7})), out(n, std::vector<std::byte>(64)) {}
  Item item(std::size_t i) { return make_item(std::span<const std::byte>(in[i]), std::span<std::byte>(out[i])); }
};

// What a callback or host form caught, to be checked on the test's thread.
struct Caught {
  std::mutex m;
  std::vector<std::string> messages;
  void add(const std::exception& e) {
    std::lock_guard lock(m);
    messages.emplace_back(e.what());
  }
};

TEST(EngineOwnThread, DrainFromACallbackThrowsInsteadOfWaitingForItself) {
  Buffers buf(1);
  Caught caught;
  std::atomic<bool> marked{false};
  Engine* self = nullptr;
  auto o = one_slot();
  o.on_complete = [&](const ItemResult&) {
    marked = self->on_own_thread();
    try {
      (void)self->drain();
    } catch (const std::logic_error& e) {
      caught.add(e);
    }
  };
  Engine engine(copy_op(), o);
  self = &engine;
  EXPECT_FALSE(engine.on_own_thread());
  auto f = engine.submit(buf.item(0));
  ASSERT_TRUE(result_within(f));
  EXPECT_TRUE(marked.load());
  ASSERT_EQ(caught.messages.size(), 1u);
  EXPECT_NE(caught.messages[0].find("drain() from an engine's own thread"), std::string::npos) << caught.messages[0];
  finishes_within("drain() after the callbacks", [&] { (void)engine.drain(); });
}

// One slot: the callback's first submit takes the slot its own item just gave back; the
// second finds none, and only this thread (the lane's completion thread) could free one.
TEST(EngineOwnThread, SubmitFromACallbackThatWouldWaitForASlotThrows) {
  for (const int batch : {1, 4}) {
    Buffers buf(8);
    Caught caught;
    std::atomic<int> accepted{0};
    std::vector<std::future<ItemResult>> chained;
    Engine* self = nullptr;
    auto o = one_slot();
    o.batch_items = batch;
    std::atomic<bool> first{true};
    o.on_complete = [&](const ItemResult&) {
      if (!first.exchange(false)) return;
      for (std::size_t i = 1; i < buf.in.size(); ++i) {
        try {
          chained.push_back(self->submit(buf.item(i)));
          ++accepted;
        } catch (const std::logic_error& e) {
          caught.add(e);
          break;
        }
      }
    };
    Engine engine(copy_op(), o);
    self = &engine;
    auto f = engine.submit(buf.item(0));
    engine.flush();  // a batch of one
    ASSERT_TRUE(result_within(f)) << "batch " << batch;
    finishes_within("drain() after a refused submit", [&] { (void)engine.drain(); });
    ASSERT_EQ(caught.messages.size(), 1u) << "batch " << batch;
    EXPECT_NE(caught.messages[0].find("every slot is taken"), std::string::npos) << caught.messages[0];
    EXPECT_EQ(accepted.load(), batch) << "a batch of that many fits in the slot given back";
    for (auto& c : chained) ASSERT_TRUE(result_within(c));
  }
}

// The host form runs on the lane's thread, which its own slot waits for.
TEST(EngineOwnThread, AHostFormThatWaitsOnItsEngineFailsItsItem) {
  for (const bool drains : {true, false}) {
    Buffers buf(2);
    Engine* self = nullptr;
    Operation op = copy_op();
    op.host = [&](const Batch& b) {
      std::memcpy(b.out(), b.in(), b.in_bytes());
      if (b.index(0) != 0) return;
      if (drains)
        (void)self->drain();
      else
        (void)self->submit(buf.item(1));  // the only slot is this item's own
    };
    Engine engine(op, one_slot());
    self = &engine;
    auto f = engine.submit(buf.item(0));
    const auto r = result_within(f);
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, ItemStatus::failed);
    EXPECT_NE(r->error.find("own thread"), std::string::npos) << r->error;
    finishes_within("drain()", [&] { (void)engine.drain(); });
  }
}

TEST(EngineOwnThread, OptionsBeyondTheirBoundsAreRefusedNamingTheRange) {
  const auto refused = [](EngineOptions o, const std::string& what) {
    try {
      Engine e(copy_op(), o);
      ADD_FAILURE() << what << " was accepted";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
    }
  };
  auto o = one_slot();
  o.lanes = 1000000;
  refused(o, "lanes 1000000 is not in 1-128");
  o = one_slot();
  o.depth = 5000;
  refused(o, "depth 5000 is not in 1-4096");
  o = one_slot();
  o.host_threads = 100000;
  refused(o, "host_threads 100000 is not in 0-1024");
  o = one_slot();
  o.batch_items = 1 << 20;
  refused(o, "batch_items 1048576 is not in 1-65536");
  o = one_slot();
  o.devices.assign(65, 0);
  refused(o, "devices (how many) 65 is not in 0-64");
}

bool sanitized() { return testing_support::kSanitized; }

// A thread that cannot start (here: no address space for its stack, as a process limit
// would refuse it) is an error naming the count, with the threads started joined; it used
// to end the process (std::terminate).
TEST(EngineOwnThreadDeathTest, AWorkerThatCannotStartIsAnErrorNamingTheCount) {
  if (sanitized()) GTEST_SKIP() << "a sanitizer's shadow memory needs more address space than any limit leaves";
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  const auto start_1000_workers = [] {
    std::ifstream status("/proc/self/status");
    unsigned long long vm_kib = 0;
    for (std::string line; std::getline(status, line);)
      if (line.rfind("VmSize:", 0) == 0) vm_kib = std::stoull(line.substr(7));
    const auto room = static_cast<rlim_t>(vm_kib * 1024 + (std::uint64_t{256} << 20));
    rlimit limit{};
    limit.rlim_cur = limit.rlim_max = room;
    if (::setrlimit(RLIMIT_AS, &limit) != 0) std::_Exit(4);
    auto o = one_slot();
    o.host_threads = 1000;
    try {
      Engine engine(copy_op(), o);
      std::_Exit(2);
    } catch (const std::system_error& e) {
      const std::string what = e.what();
      std::fprintf(stderr, "%s\n", what.c_str());
      const bool named = what.find("cannot start host worker thread") != std::string::npos &&
                         what.find("of 1000") != std::string::npos;
      std::_Exit(named ? 0 : 3);
    }
  };
  EXPECT_EXIT(start_1000_workers(), ::testing::ExitedWithCode(0), "of 1000");
}

}  // namespace
}  // namespace streampipe::pipeline
