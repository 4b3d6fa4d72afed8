// SPDX-License-Identifier: Apache-2.0
// Which device of a set takes the next batch: an even spread before anything is measured,
// the device expected to finish first after (waiting for a full fast device rather than
// handing work to a slow one), devices that join late one batch at a time until measured,
// never a device that is starting, failed or lost.

#include "device_choice.hpp"

#include <gtest/gtest.h>

namespace streampipe::pipeline::detail {
namespace {

using State = DeviceChoice::State;

const auto every_device_free = [](std::size_t) { return true; };

// Runs a warm-up batch and then one of `latency_ms` on device d.
void measure(DeviceChoice& c, std::size_t d, double latency_ms) {
  c.started(d);
  c.finished(d, 1000.0, true);  // the warm-up: never counted
  c.started(d);
  c.finished(d, latency_ms, true);
}

TEST(DeviceChoice, SpreadsOverTheSlotsBeforeAnythingIsMeasured) {
  DeviceChoice c;
  for (int d = 0; d < 3; ++d) c.add(4, State::ready);
  std::vector<int> taken(3);
  for (int i = 0; i < 9; ++i) {
    const auto d = c.choose(every_device_free);
    ASSERT_TRUE(d);
    ++taken[*d];
    c.started(*d);
  }
  EXPECT_EQ(taken, (std::vector<int>{3, 3, 3}));
}

TEST(DeviceChoice, TheFirstBatchIsAWarmUpAndLaterOnesAreWeighted) {
  DeviceChoice c;
  c.add(4, State::ready);
  c.started(0);
  c.finished(0, 50.0, true);
  EXPECT_EQ(c.latency_ms(0), 0.0);  // the warm-up
  c.started(0);
  c.finished(0, 2.0, true);
  EXPECT_DOUBLE_EQ(c.latency_ms(0), 2.0);
  c.started(0);
  c.finished(0, 6.0, true);  // a new sample weighs a quarter
  EXPECT_DOUBLE_EQ(c.latency_ms(0), 0.75 * 2.0 + 0.25 * 6.0);
  c.started(0);
  c.finished(0, 100.0, false);  // never ran on the device: no sample
  EXPECT_DOUBLE_EQ(c.latency_ms(0), 3.0);
  EXPECT_EQ(c.in_flight(0), 0u);
}

TEST(DeviceChoice, AFullFastDeviceIsWaitedForRatherThanASlowOneTaken) {
  DeviceChoice c;
  c.add(2, State::ready);  // fast: 1 ms a batch
  c.add(8, State::ready);  // slow: 10 ms a batch
  measure(c, 0, 1.0);
  measure(c, 1, 10.0);
  const auto fast_full = [](std::size_t d) { return d != 0; };
  // The fast device frees a slot every 0.5 ms: 1.5 ms to finish there, against 10 ms.
  EXPECT_FALSE(c.choose(fast_full));
  EXPECT_EQ(c.choose(every_device_free), 0u);
}

TEST(DeviceChoice, ASlowDeviceTakesWhatItFinishesSooner) {
  DeviceChoice c;
  c.add(1, State::ready);  // 4 ms a batch, one at a time
  c.add(4, State::ready);  // 6 ms a batch, four at a time
  measure(c, 0, 4.0);
  measure(c, 1, 6.0);
  // Device 0 full: 8 ms there, 6 ms on device 1.
  EXPECT_EQ(c.choose([](std::size_t d) { return d == 1; }), 1u);
  EXPECT_EQ(c.choose(every_device_free), 0u);
}

TEST(DeviceChoice, ANewcomerTakesOneBatchAtATimeUntilMeasured) {
  DeviceChoice c;
  c.add(4, State::ready);
  const std::size_t late = c.add(4, State::starting);
  measure(c, 0, 2.0);
  c.started(0);
  EXPECT_EQ(c.choose(every_device_free), 0u);  // still starting: never chosen
  c.ready(late);
  // Not measured: counts as fast as the fastest, and is not loaded.
  EXPECT_EQ(c.choose(every_device_free), late);
  c.started(late);
  EXPECT_EQ(c.choose(every_device_free), 0u);  // one batch at a time
  c.finished(late, 9.0, true);                 // its warm-up
  EXPECT_EQ(c.choose(every_device_free), late);
  c.started(late);
  c.finished(late, 0.5, true);
  EXPECT_DOUBLE_EQ(c.latency_ms(late), 0.5);
  c.started(late);
  EXPECT_EQ(c.choose(every_device_free), late);  // measured and fast: as many as it has room for
}

TEST(DeviceChoice, NothingIsChosenWhileEveryDeviceStarts) {
  DeviceChoice c;
  c.add(2, State::starting);
  c.add(2, State::starting);
  EXPECT_FALSE(c.choose(every_device_free));
  EXPECT_EQ(c.alive_count(), 2u);
  c.fail(0);
  EXPECT_EQ(c.state(0), State::failed);
  EXPECT_EQ(c.alive_count(), 1u);
  c.ready(0);  // a failed start stays failed
  EXPECT_EQ(c.state(0), State::failed);
  c.ready(1);
  EXPECT_EQ(c.choose(every_device_free), 1u);
}

TEST(DeviceChoice, ALostDeviceIsNeverChosenAgain) {
  DeviceChoice c;
  c.add(2, State::ready);
  c.add(2, State::ready);
  c.lose(0);
  EXPECT_EQ(c.state(0), State::lost);
  EXPECT_EQ(c.alive_count(), 1u);
  for (int i = 0; i < 5; ++i) {
    EXPECT_EQ(c.choose(every_device_free), 1u);
    c.started(1);
  }
  c.lose(1);
  EXPECT_EQ(c.alive_count(), 0u);
  EXPECT_FALSE(c.choose(every_device_free));
}

TEST(DeviceChoice, ADeviceNeedsASlot) { EXPECT_THROW(DeviceChoice().add(0, State::ready), std::invalid_argument); }

}  // namespace
}  // namespace streampipe::pipeline::detail
