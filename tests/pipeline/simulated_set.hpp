// SPDX-License-Identifier: Apache-2.0
#pragma once
// A device set without a GPU, for the engine's tests: an operation whose host form adds one
// to every byte and stands for each member's device (its speed, its start, its loss), and
// a run of items through an engine, every future resolved within the hang limit (and the
// check that each came back right), and the order the engine's callback got them in.
//   delay[device]       each batch on that member takes this long
//   start_delay[device] a simulated GPU's start (Operation::start_device) takes this long,
//                       in short steps that ask whether the engine still wants it
//   never_starts        that simulated GPU's start throws
//   lost_device         a batch there throws a sticky CUDA error (a GPU gone bad) once
//                       `lose_after` batches ran there

#include "bounded.hpp"

#include "streampipe/cuda/error.hpp"
#include "streampipe/pipeline/engine.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <vector>

namespace streampipe::pipeline::testing {

struct SimulatedSet {
  std::map<int, std::chrono::microseconds> delay;
  std::map<int, std::chrono::milliseconds> start_delay;
  int never_starts = -100;
  int lost_device = -100;
  int lose_after = 0;
  std::atomic<int> ran_on_lost{0};
  std::atomic<int> started{0};

  Operation operation() {
    using namespace std::chrono_literals;
    Operation op;
    op.name = "add one";
    op.output_bytes = [](std::size_t n) { return n; };
    op.host = [this](const Batch& b) {
      if (b.device() == lost_device && ran_on_lost++ >= lose_after)
        throw CudaError(cudaErrorIllegalAddress, "simulatedKernel", __FILE__, __LINE__);
      if (const auto d = delay.find(b.device()); d != delay.end()) std::this_thread::sleep_for(d->second);
      for (std::size_t i = 0; i < b.in_bytes(); ++i)
        b.out()[i] = static_cast<std::byte>(static_cast<unsigned char>(b.in()[i]) + 1);
    };
    op.start_device = [this](const DeviceStart& s) -> std::shared_ptr<void> {
      if (s.device == never_starts) throw std::runtime_error("no such simulated board");
      if (const auto d = start_delay.find(s.device); d != start_delay.end()) {
        for (auto left = d->second; left > 0ms; left -= 5ms) {
          if (s.stop_requested()) throw std::runtime_error("stopped");
          std::this_thread::sleep_for(5ms);
        }
      }
      ++started;
      return std::make_shared<int>(s.device);
    };
    return op;
  }
};

struct ItemsRun {
  std::vector<std::vector<std::byte>> in, out;
  std::vector<ItemResult> results;

  // Whether item i came back as its input plus one.
  [[nodiscard]] bool plus_one(std::size_t i) const {
    for (std::size_t k = 0; k < in[i].size(); ++k)
      if (static_cast<unsigned char>(out[i][k]) != static_cast<unsigned char>(static_cast<unsigned char>(in[i][k]) + 1))
        return false;
    return true;
  }

  // All `count` items came back done and right; `each` (if given) checks more of each result.
  // Fatal failures end only this check: call it in ASSERT_NO_FATAL_FAILURE.
  void expect_all_right(std::size_t count, const std::function<void(const ItemResult&)>& each = {}) const {
    ASSERT_EQ(results.size(), count);
    for (std::size_t i = 0; i < results.size(); ++i) {
      ASSERT_TRUE(results[i].ok()) << results[i].error;
      EXPECT_TRUE(plus_one(i)) << i;
      if (each) each(results[i]);
    }
  }
};

// `count` items of `bytes` each (item i filled with i) and of `work_kind` through `engine`,
// then drain.
inline ItemsRun run_items(Engine& engine, std::size_t count, std::size_t bytes = 64, int work_kind = 0) {
  ItemsRun run;
  for (std::size_t i = 0; i < count; ++i) {
    run.in.emplace_back(bytes, static_cast<std::byte>(i));
    run.out.emplace_back(bytes, std::byte{0});
  }
  std::vector<std::future<ItemResult>> futures;
  streampipe::testing::finishes_within("the run", [&] {
    for (std::size_t i = 0; i < count; ++i) {
      Item item = make_item(std::span<const std::byte>(run.in[i]), std::span<std::byte>(run.out[i]));
      item.work_kind = work_kind;
      futures.push_back(engine.submit(std::move(item)));
    }
    (void)engine.drain();
  });
  for (auto& f : futures)
    if (auto r = streampipe::testing::result_within(f)) run.results.push_back(std::move(*r));
  return run;
}

// The index of each item as the engine's callback got it, in delivery order.
class DeliveryOrder {
 public:
  // Records the result's index, then calls `also` (if any) under the same lock.
  [[nodiscard]] std::function<void(const ItemResult&)> callback(std::function<void(const ItemResult&)> also = {}) {
    return [this, also = std::move(also)](const ItemResult& r) {
      const std::lock_guard lock(mutex_);
      order_.push_back(r.index);
      if (also) also(r);
    };
  }
  // Items 0 .. count - 1 were delivered once each, in index order (read after the run).
  void expect_in_order(std::size_t count) const {
    ASSERT_EQ(order_.size(), count);
    for (std::size_t i = 0; i < order_.size(); ++i) EXPECT_EQ(order_[i], i);
  }

 private:
  std::mutex mutex_;
  std::vector<std::size_t> order_;
};

}  // namespace streampipe::pipeline::testing
