// SPDX-License-Identifier: Apache-2.0
// Which device of a set takes the next batch: even spread before anything is measured, the
// device expected to finish first after, never a lost one.

#include "device_choice.hpp"

#include <gtest/gtest.h>

namespace streampipe::pipeline::detail {
namespace {

const auto every_device_free = [](std::size_t) { return true; };

TEST(DeviceChoice, SpreadsByWorkInFlightBeforeAnythingIsMeasured) {
  DeviceChoice c(3);
  std::vector<int> taken(3);
  for (int i = 0; i < 9; ++i) {
    const auto d = c.choose(every_device_free);
    ASSERT_TRUE(d);
    ++taken[*d];
    c.started(*d);
  }
  EXPECT_EQ(taken, (std::vector<int>{3, 3, 3}));
}

TEST(DeviceChoice, AFasterDeviceTakesMoreWorkInFlight) {
  DeviceChoice c(2);
  c.started(0);
  c.finished(0, 1.0, 1, true);  // 1 ms a batch
  c.started(1);
  c.finished(1, 4.0, 1, true);  // 4 ms a batch
  for (int i = 0; i < 3; ++i) c.started(0);
  // Device 0: (3 + 1) x 1 ms = 4 ms; device 1: (0 + 1) x 4 ms = 4 ms: a tie goes low.
  EXPECT_EQ(c.choose(every_device_free), 0u);
  c.started(0);
  EXPECT_EQ(c.choose(every_device_free), 1u);  // 5 ms against 4 ms
}

TEST(DeviceChoice, ConcurrencySharesTheMeasuredTime) {
  DeviceChoice c(1);
  c.started(0);
  c.finished(0, 8.0, 4, true);
  EXPECT_DOUBLE_EQ(c.ms_per_batch(0), 2.0);
  c.started(0);
  c.finished(0, 4.0, 4, true);  // a sample of 1 ms weighs a quarter
  EXPECT_DOUBLE_EQ(c.ms_per_batch(0), 0.75 * 2.0 + 0.25 * 1.0);
  c.started(0);
  c.finished(0, 100.0, 4, false);  // never ran on the device: no sample
  EXPECT_DOUBLE_EQ(c.ms_per_batch(0), 1.75);
  EXPECT_EQ(c.in_flight(0), 0u);
}

TEST(DeviceChoice, AnUnmeasuredDeviceCountsAsFastAsTheFastest) {
  DeviceChoice c(2);
  c.started(0);
  c.finished(0, 2.0, 1, true);
  c.started(0);
  // Device 0: 2 x 2 ms; device 1 not measured: 1 x 2 ms.
  EXPECT_EQ(c.choose(every_device_free), 1u);
}

TEST(DeviceChoice, OnlyDevicesWithAFreeSlotQualify) {
  DeviceChoice c(3);
  EXPECT_EQ(c.choose([](std::size_t d) { return d == 2; }), 2u);
  EXPECT_FALSE(c.choose([](std::size_t) { return false; }));
}

TEST(DeviceChoice, ALostDeviceIsNeverChosenAgain) {
  DeviceChoice c(2);
  c.lose(0);
  EXPECT_FALSE(c.alive(0));
  EXPECT_EQ(c.alive_count(), 1u);
  for (int i = 0; i < 5; ++i) {
    EXPECT_EQ(c.choose(every_device_free), 1u);
    c.started(1);
  }
  c.lose(1);
  EXPECT_EQ(c.alive_count(), 0u);
  EXPECT_FALSE(c.choose(every_device_free));
}

}  // namespace
}  // namespace streampipe::pipeline::detail
