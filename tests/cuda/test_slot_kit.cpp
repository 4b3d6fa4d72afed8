// SPDX-License-Identifier: Apache-2.0
// The lane kit both runtimes share: a slot's four events read as host times and as
// intervals, and the graph cache that captures on a miss and replays on a hit.

#include "streampipe/cuda/device_buffer.hpp"
#include "streampipe/cuda/event_clock.hpp"
#include "streampipe/cuda/graph_cache.hpp"
#include "streampipe/cuda/slot_events.hpp"
#include "support/gpu.hpp"

#include <chrono>
#include <stdexcept>
#include <vector>

namespace streampipe {
namespace {

double steady_ms() {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

TEST(SlotKitGpu, FourMarksInOrderOnTheHostClock) {
  SP_REQUIRE_GPU();
  const Device d(0);
  Stream s(d);
  const double before = steady_ms();
  const EventClock clock(d, s.ref(), &steady_ms);
  SlotEvents events(d, EventTiming::enabled, EventWait::blocking, EventWait::spin);
  DeviceBuffer<int> buf(d, 1 << 20);
  std::vector<int> host(buf.size(), 3);
  events.start.record(s.ref());
  SP_CUDA_CHECK(cudaMemcpyAsync(buf.data(), host.data(), buf.bytes(), cudaMemcpyHostToDevice, s.handle()));
  events.inputs_in.record(s.ref());
  SP_CUDA_CHECK(cudaMemsetAsync(buf.data(), 0, buf.bytes(), s.handle()));
  events.computed.record(s.ref());
  SP_CUDA_CHECK(cudaMemcpyAsync(host.data(), buf.data(), buf.bytes(), cudaMemcpyDeviceToHost, s.handle()));
  events.done.record(s.ref());
  events.done.synchronize();
  const double after = steady_ms();

  const SlotTimes t = events.times(clock);
  EXPECT_LE(before, t.start_ms);
  EXPECT_LE(t.start_ms, t.inputs_in_ms);
  EXPECT_LE(t.inputs_in_ms, t.computed_ms);
  EXPECT_LE(t.computed_ms, t.done_ms);
  EXPECT_LE(t.done_ms, after + 1.0);  // the event resolution and the clock's read

  const SlotIntervals i = events.intervals();
  EXPECT_GT(i.in_ms, 0.0);
  EXPECT_GT(i.out_ms, 0.0);
  EXPECT_NEAR(i.in_ms + i.compute_ms + i.out_ms, t.done_ms - t.start_ms, 0.01);

  const SlotTimes whole = events.times(clock, SlotSpan::whole);
  EXPECT_EQ(whole.inputs_in_ms, whole.start_ms);
  EXPECT_EQ(whole.computed_ms, whole.done_ms);
  EXPECT_EQ(whole.done_ms, t.done_ms);
}

// Untimed marks (lanes beyond the hardware queues) order and signal, and are never read as times.
TEST(SlotKitGpu, UntimedMarksSignalButHaveNoTimes) {
  SP_REQUIRE_GPU();
  const Device d(0);
  Stream s(d);
  const EventClock clock(d, s.ref(), &steady_ms);
  SlotEvents events(d, EventTiming::disabled, EventWait::blocking, EventWait::blocking);
  DeviceBuffer<int> buf(d, 1 << 16);
  events.start.record(s.ref());
  SP_CUDA_CHECK(cudaMemsetAsync(buf.data(), 0, buf.bytes(), s.handle()));
  events.inputs_in.record(s.ref());
  events.computed.record(s.ref());
  events.done.record(s.ref());
  events.inputs_in.synchronize();
  events.done.synchronize();
  EXPECT_THROW((void)events.times(clock), std::logic_error);  // elapsed() needs timing events
  EXPECT_THROW((void)events.intervals(), std::logic_error);
}

TEST(SlotKitGpu, GraphCacheCapturesOnAMissAndReplaysOnAHit) {
  SP_REQUIRE_GPU();
  const Device d(0);
  Stream s(d);
  DeviceBuffer<int> buf(d, 256);
  SP_CUDA_CHECK(cudaMemsetAsync(buf.data(), 0, buf.bytes(), s.handle()));
  GraphCache<int> cache(2);
  int captures = 0;
  const auto fill = [&](int value) {
    return [&, value] {
      ++captures;
      SP_CUDA_CHECK(cudaMemsetAsync(buf.data(), value, buf.bytes(), s.handle()));
    };
  };
  EXPECT_FALSE(cache.replay(1, s.ref()));
  (void)cache.capture(1, s.ref(), fill(1));
  (void)cache.capture(2, s.ref(), fill(2));
  EXPECT_EQ(captures, 2);
  std::vector<int> host(buf.size());
  const auto read = [&] {
    SP_CUDA_CHECK(cudaMemcpyAsync(host.data(), buf.data(), buf.bytes(), cudaMemcpyDeviceToHost, s.handle()));
    s.synchronize();
    return host[buf.size() - 1];
  };
  EXPECT_EQ(read(), 0) << "a capture only records";
  ASSERT_TRUE(cache.replay(1, s.ref()));
  EXPECT_EQ(read(), 0x01010101);
  ASSERT_TRUE(cache.replay(2, s.ref()));
  EXPECT_EQ(read(), 0x02020202);
  (void)cache.capture(3, s.ref(), fill(3));  // beyond capacity: the oldest (1) goes
  EXPECT_EQ(cache.size(), 2u);
  EXPECT_EQ(cache.find(1), nullptr);
  EXPECT_NE(cache.find(3), nullptr);

  // A failing capture leaves the cache as it was.
  EXPECT_THROW((void)cache.capture(4, s.ref(), [] { throw std::runtime_error("enqueue failed"); }),
               std::runtime_error);
  EXPECT_EQ(cache.size(), 2u);
  EXPECT_EQ(cache.find(4), nullptr);
  ASSERT_TRUE(cache.replay(3, s.ref()));
  EXPECT_EQ(read(), 0x03030303);
}

}  // namespace
}  // namespace streampipe
