// SPDX-License-Identifier: Apache-2.0
// The host backend's lane: it reports a slot's copies in as done before the slot's
// operation has finished, which is when the engine may lend that staging block again.

#include "lane_executor.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <future>
#include <vector>

namespace streampipe::pipeline::detail {
namespace {

using namespace std::chrono_literals;

double test_clock_ms() { return 0; }

TEST(HostLane, CopiesInAreReportedDoneBeforeTheSlotCompletes) {
  std::promise<void> open;
  std::shared_future<void> gate = open.get_future().share();
  Operation op;
  op.name = "gated copy";
  op.host = [gate](const Batch& b) {
    gate.wait();
    std::memcpy(b.out(), b.in(), b.in_bytes());
  };
  LaneConfig config;
  config.slots = 2;
  config.now_ms = &test_clock_ms;
  auto lane = make_host_lane(config);

  std::vector<std::byte> staging(4096, std::byte{5}), out(4096);
  SlotWork work;
  work.slot = 1;
  work.op = &op;
  work.copies_in = {{staging.data(), 0, staging.size()}};
  work.copies_out = {{0, out.data(), out.size()}};
  work.in_bytes = work.out_bytes = staging.size();
  work.descriptors = {{0, staging.size(), 0, staging.size()}};
  work.indices = {0};
  lane->enqueue(work);
  EXPECT_TRUE(work.inputs_fenced);

  auto inputs = std::async(std::launch::async, [&] { lane->wait_inputs(1); });
  ASSERT_EQ(inputs.wait_for(5s), std::future_status::ready) << "the copy in was not reported while the operation waits";
  std::fill(staging.begin(), staging.end(), std::byte{9});  // the staging may be reused now
  open.set_value();
  lane->wait(work);
  EXPECT_FALSE(work.error);
  EXPECT_EQ(out, std::vector<std::byte>(4096, std::byte{5}));
}

}  // namespace
}  // namespace streampipe::pipeline::detail
