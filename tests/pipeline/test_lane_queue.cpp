// SPDX-License-Identifier: Apache-2.0
// A lane's queue completes its slots in the order they were pushed, all of them, before it
// stops.

#include "lane_queue.hpp"
#include "member.hpp"

#include <gtest/gtest.h>

#include <memory>
#include <mutex>
#include <vector>

namespace streampipe::pipeline::detail {
namespace {

// Enqueues nothing; reports the copies in as fenced, as both real lanes do.
class FakeExecutor final : public LaneExecutor {
 public:
  void enqueue(SlotWork& work) override { work.inputs_fenced = true; }
  void wait(SlotWork&) override {}
  void wait_inputs(int) override {}
};

TEST(LaneQueue, CompletesEverySlotInPushOrderBeforeStopping) {
  Member owner;
  std::vector<std::unique_ptr<Slot>> slots;
  for (int i = 0; i < 5; ++i) slots.push_back(std::make_unique<Slot>(i, 0, 0, owner, 0, 0, true, 1));
  std::mutex mutex;
  std::vector<int> completed;
  LaneQueue queue(std::make_unique<FakeExecutor>(), [&](Slot& slot, LaneExecutor&) {
    std::lock_guard lock(mutex);
    completed.push_back(slot.id);
  });
  for (int i : {3, 0, 4, 1, 2}) EXPECT_TRUE(queue.push(*slots[static_cast<std::size_t>(i)]));
  queue.stop();
  queue.stop();  // a second stop is harmless
  std::lock_guard lock(mutex);
  EXPECT_EQ(completed, (std::vector<int>{3, 0, 4, 1, 2}));
}

}  // namespace
}  // namespace streampipe::pipeline::detail
