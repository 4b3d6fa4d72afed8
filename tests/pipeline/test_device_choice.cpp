// SPDX-License-Identifier: Apache-2.0
// Which device of a set takes the next batch: an even spread before anything is measured,
// work in proportion to each device's speed after, a slow device left out only where it
// would hold the end of a run of known length, devices that join late one batch at a time
// until measured, never a device that is starting, failed or lost; batches weighed by the
// work they hold, not counted, and each kind of work measured apart (through the engine's
// free slots too).

#include "device_choice.hpp"
#include "free_slots.hpp"
#include "member.hpp"

#include <gtest/gtest.h>

#include <memory>
#include <vector>

namespace streampipe::pipeline::detail {
namespace {

using State = DeviceChoice::State;

const auto every_device_free = [](std::size_t) { return true; };
const auto every_device_allowed = [](std::size_t) { return true; };

// Runs a warm-up batch and then enough of `latency_ms` on device d for its estimate to be
// trusted (DeviceChoice::kRunsBeforeLeftOut).
void measure(DeviceChoice& c, std::size_t d, double latency_ms) {
  c.started(d);
  c.finished(d, 1000.0, true);  // the warm-up: never counted
  for (std::size_t i = 1; i < DeviceChoice::kRunsBeforeLeftOut; ++i) {
    c.started(d);
    c.finished(d, latency_ms, true);
  }
}

// Runs `count` batches of `work` units of `kind` on device d, each taking `latency_ms` (the
// device's first is its warm-up).
void run_groups(DeviceChoice& c, std::size_t d, double work, double latency_ms, int count = 1, std::size_t kind = 0) {
  for (int i = 0; i < count; ++i) {
    c.started(d, work, kind);
    c.finished(d, latency_ms, true, work, work, kind);
  }
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

TEST(DeviceChoice, AFasterDeviceTakesMoreWorkInFlight) {
  DeviceChoice c;
  c.add(1, State::ready);  // 1 ms a batch
  c.add(1, State::ready);  // 4 ms a batch
  measure(c, 0, 1.0);
  measure(c, 1, 4.0);
  for (int i = 0; i < 3; ++i) c.started(0);
  // Device 0: (3 + 1) x 1 ms = 4 ms; device 1: (0 + 1) x 4 ms = 4 ms: a tie goes low.
  EXPECT_EQ(c.choose(every_device_free), 0u);
  c.started(0);
  EXPECT_EQ(c.choose(every_device_free), 1u);  // 5 ms against 4 ms
}

TEST(DeviceChoice, SlotsShareTheMeasuredTime) {
  DeviceChoice c;
  c.add(8, State::ready);  // 8 at once, 8 ms each: one a millisecond
  c.add(1, State::ready);  // one at a time, 2 ms each
  measure(c, 0, 8.0);
  measure(c, 1, 2.0);
  EXPECT_EQ(c.choose(every_device_free), 0u);  // 1 ms against 2 ms
  c.started(0);
  EXPECT_EQ(c.choose(every_device_free), 0u);  // 2 ms against 2 ms: a tie goes low
  c.started(0);
  EXPECT_EQ(c.choose(every_device_free), 1u);  // 3 ms against 2 ms
}

TEST(DeviceChoice, OnlyDevicesWithAFreeSlotAndAllowedQualify) {
  DeviceChoice c;
  for (int d = 0; d < 3; ++d) c.add(2, State::ready);
  EXPECT_EQ(c.choose([](std::size_t d) { return d == 2; }), 2u);
  EXPECT_FALSE(c.choose([](std::size_t) { return false; }));
  EXPECT_EQ(c.choose(every_device_free, [](std::size_t d) { return d != 0; }), 1u);
}

TEST(DeviceChoice, ASlowDeviceIsLeftOutWhereItWouldHoldTheEndOfTheRun) {
  DeviceChoice c;
  c.add(4, State::ready);  // the CPU: 40 ms a batch
  c.add(4, State::ready);  // a GPU: 1 ms a batch, four at once
  measure(c, 0, 40.0);
  measure(c, 1, 1.0);
  for (int i = 0; i < 4; ++i) c.started(1);
  const auto cpu_free = [](std::size_t d) { return d == 0; };
  // The run's length unknown: the CPU takes its share whenever it has room.
  EXPECT_EQ(c.choose(cpu_free, every_device_allowed), 0u);
  // 1,000 batches left: the set needs about 1000 / 4.1 ms, the CPU's batch 40: it works.
  EXPECT_EQ(c.choose(cpu_free, every_device_allowed, 1000.0), 0u);
  // 20 left: the GPU finishes them in about 6 ms, long before the CPU's one batch.
  EXPECT_FALSE(c.choose(cpu_free, every_device_allowed, 20.0));
  // The fastest device allowed is never left out, or nothing would run the rest.
  EXPECT_EQ(c.choose(cpu_free, [](std::size_t d) { return d == 0; }, 0.0), 0u);
  EXPECT_NEAR(c.horizon_ms(20.0), (4 + 20) / (4 / 40.0 + 4 / 1.0), 1e-9);
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
  for (int i = 0; i < 2; ++i) {
    EXPECT_EQ(c.choose(every_device_free), 1u);
    c.started(1);
  }
  c.lose(1);
  EXPECT_EQ(c.alive_count(), 0u);
  EXPECT_FALSE(c.choose(every_device_free));
}

TEST(DeviceChoice, ADeviceNeedsASlot) { EXPECT_THROW(DeviceChoice().add(0, State::ready), std::invalid_argument); }

// gray's case: the CPU measured on single files (40 ms each on one of 4 slots), a GPU on
// groups of 16 (320 ms a group, 20 ms a file, on 4 slots). Counted in batches the GPU
// would look 8 times slower; weighed by their work it is twice as fast, and takes a group.
TEST(DeviceChoice, BatchesAreWeighedByTheirWork) {
  DeviceChoice c;
  const std::size_t cpu = c.add(4, State::ready), gpu = c.add(4, State::ready);
  measure(c, cpu, 40.0);
  run_groups(c, gpu, 16.0, 9000.0);  // the warm-up
  run_groups(c, gpu, 16.0, 320.0);
  EXPECT_DOUBLE_EQ(c.latency_ms(cpu), 40.0);
  EXPECT_DOUBLE_EQ(c.latency_ms(gpu), 20.0);  // per unit of work
  EXPECT_EQ(c.choose(every_device_free, every_device_allowed, std::nullopt, 16.0), gpu);
  // What is in flight counts by its work too: two groups on the GPU (32 units, 160 ms to
  // go) against one file on the CPU (10 ms): a group goes to the CPU now.
  c.started(gpu, 16.0);
  c.started(gpu, 16.0);
  c.started(cpu, 1.0);
  EXPECT_EQ(c.choose(every_device_free, every_device_allowed, std::nullopt, 16.0), cpu);
  // Given back, the groups leave nothing in flight behind.
  c.finished(gpu, 0.0, false, 16.0, 16.0);
  c.finished(gpu, 0.0, false, 16.0, 16.0);
  EXPECT_EQ(c.in_flight(gpu), 0u);
  EXPECT_NEAR(c.horizon_ms(0.0), 1.0 / (4 / 40.0 + 4 / 20.0), 1e-9);  // the CPU's one file
}

// Near the end of a run the horizon holds out a device for the batch it would be given: with
// the GPU at 10 ms a unit and 64 units in flight, the set finishes those and 32 more in 192
// ms; a group of 16 on the CPU (640 ms) would end after that, a single file (40 ms) not.
TEST(DeviceChoice, TheHorizonWeighsTheBatchAtHand) {
  DeviceChoice c;
  const std::size_t cpu = c.add(4, State::ready), gpu = c.add(4, State::ready);
  measure(c, cpu, 40.0);
  run_groups(c, gpu, 16.0, 1.0);         // the warm-up
  run_groups(c, gpu, 16.0, 160.0, 3);    // 10 ms a unit
  for (int i = 0; i < 4; ++i) c.started(gpu, 16.0);  // the GPU is full
  const auto only_cpu_free = [cpu](std::size_t d) { return d == cpu; };
  EXPECT_FALSE(c.choose(only_cpu_free, every_device_allowed, 32.0, 16.0).has_value());
  EXPECT_EQ(c.choose(only_cpu_free, every_device_allowed, 32.0, 1.0), cpu);
}

// gray's mixed run: single files (kind 0) are decoded by host workers whichever device takes
// them, so a GPU looks no faster than the CPU on them (300 ms a file against 200); on groups
// for its JPEG engines (kind 1) it takes 25 ms a file. Measured apart, a group goes to the
// GPU; the CPU takes one group only when it is idle and the run is far from its end, to be
// measured; once measured as slow on groups it is left out of them near the end, while it
// still takes single files.
TEST(DeviceChoice, KindsOfWorkAreMeasuredApart) {
  DeviceChoice c;
  const std::size_t cpu = c.add(4, State::ready), gpu = c.add(4, State::ready);
  measure(c, cpu, 200.0);
  run_groups(c, gpu, 1.0, 1000.0);       // the warm-up
  run_groups(c, gpu, 1.0, 300.0, 3);     // single files
  run_groups(c, gpu, 16.0, 400.0, 2, 1); // groups: 25 ms a file
  EXPECT_DOUBLE_EQ(c.latency_ms(gpu, 0), 300.0);
  EXPECT_DOUBLE_EQ(c.latency_ms(gpu, 1), 25.0);
  EXPECT_EQ(c.latency_ms(cpu, 1), 0.0);
  // Judged by single files the CPU would be chosen (200 ms against 300); for a group, the
  // CPU, busy and not measured on groups, is not.
  EXPECT_EQ(c.choose(every_device_free, every_device_allowed, std::nullopt, 1.0, 0), cpu);
  c.started(cpu, 1.0);
  EXPECT_EQ(c.choose(every_device_free, every_device_allowed, std::nullopt, 16.0, 1), gpu);
  c.finished(cpu, 200.0, true, 1.0, 1.0);
  const auto only_cpu_free = [cpu](std::size_t d) { return d == cpu; };
  EXPECT_EQ(c.choose(only_cpu_free, every_device_allowed, std::nullopt, 16.0, 1), cpu);  // idle: measured once
  // ... but not near the end of a run: judged by its single files (200 ms a file, 3.2 s a
  // group) it would end after the GPU's 600 ms for what is in flight and 32 files more.
  for (int i = 0; i < 4; ++i) c.started(gpu, 16.0);
  EXPECT_FALSE(c.choose(only_cpu_free, every_device_allowed, 32.0, 16.0, 1).has_value());
  EXPECT_EQ(c.choose(only_cpu_free, every_device_allowed, 1000.0, 16.0, 1), cpu);
  for (int i = 0; i < 4; ++i) c.finished(gpu, 0.0, false, 16.0, 16.0);
  run_groups(c, cpu, 16.0, 1600.0, 1, 1);  // 100 ms a file
  EXPECT_DOUBLE_EQ(c.latency_ms(cpu, 1), 100.0);
  EXPECT_DOUBLE_EQ(c.latency_ms(cpu, 0), 200.0);  // its single files' estimate unchanged
  for (int i = 0; i < 4; ++i) c.started(gpu, 16.0);  // the GPU is full
  EXPECT_NEAR(c.horizon_ms(32.0, 1), (64 + 32) / (4 / 100.0 + 4 / 25.0), 1e-9);
  EXPECT_FALSE(c.choose(only_cpu_free, every_device_allowed, 32.0, 16.0, 1).has_value());
  EXPECT_EQ(c.choose(only_cpu_free, every_device_allowed, 32.0, 1.0, 0), cpu);
}

// A device measured on one kind tries another one batch at a time, even while no device is
// measured on it: a batch of a new kind may take far longer than the device's others.
TEST(DeviceChoice, ADeviceTriesANewKindOneBatchAtATime) {
  DeviceChoice c;
  const std::size_t cpu = c.add(4, State::ready), gpu = c.add(4, State::ready);
  measure(c, cpu, 1.0);
  measure(c, gpu, 1.5);
  c.started(cpu, 16.0, 1);
  c.started(gpu, 16.0, 1);
  EXPECT_FALSE(c.choose(every_device_free, every_device_allowed, std::nullopt, 16.0, 1).has_value());
  EXPECT_EQ(c.choose(every_device_free, every_device_allowed, std::nullopt, 1.0, 0), cpu);  // other kinds go on
  c.finished(gpu, 32.0, true, 16.0, 16.0, 1);  // 2 ms a unit
  EXPECT_EQ(c.choose(every_device_free, every_device_allowed, std::nullopt, 16.0, 1), gpu);
}

// A GPU that joined late was measured once on a batch that carried a lane's set-up (2,000 ms
// for a group of 16): the horizon does not leave it out on that alone, so it takes batches
// and is measured again; once measured on enough batches, a device that slow is left out.
TEST(DeviceChoice, OneSlowMeasurementDoesNotLeaveADeviceOut) {
  DeviceChoice c;
  const std::size_t fast = c.add(4, State::ready), late = c.add(4, State::ready);
  measure(c, fast, 10.0);
  run_groups(c, late, 16.0, 5000.0);  // its warm-up
  run_groups(c, late, 16.0, 2000.0);  // 125 ms a unit, its lanes' set-up in it
  for (int i = 0; i < 4; ++i) c.started(fast, 16.0);  // the fast device is full
  const auto only_late_free = [late](std::size_t d) { return d == late; };
  EXPECT_EQ(c.choose(only_late_free, every_device_allowed, 64.0, 16.0), late);
  run_groups(c, late, 16.0, 2000.0, 2);
  EXPECT_FALSE(c.choose(only_late_free, every_device_allowed, 64.0, 16.0).has_value());
}

// The engine's free slots hand a batch's kind on: a slot taken for a kind of work counts its
// time toward its member's speed on that kind, and on no other.
TEST(FreeSlots, MeasureTheKindASlotWasTakenFor) {
  FreeSlots free;
  Member owner;
  const std::size_t member = free.add_member(2, DeviceChoice::State::starting, false);
  std::vector<std::unique_ptr<Slot>> slots;
  for (int i = 0; i < 2; ++i) slots.push_back(std::make_unique<Slot>(i, 0, 0, owner, member, kCpuDevice, true, 1));
  free.join(member, slots);
  const auto take_and_give_back = [&](double now, double latency, double work, std::size_t kind) {
    Slot* s = free.take(now, false, std::nullopt, work, kind);
    ASSERT_NE(s, nullptr);
    EXPECT_EQ(s->taken_kind, kind);
    free.give_back(*s, now + latency, true, work);
  };
  take_and_give_back(0, 50, 1, 0);    // the warm-up
  take_and_give_back(100, 8, 1, 0);   // 8 ms a unit of kind 0
  take_and_give_back(200, 32, 16, 2); // 2 ms a unit of kind 2
  EXPECT_DOUBLE_EQ(free.choice().latency_ms(member, 0), 8.0);
  EXPECT_DOUBLE_EQ(free.choice().latency_ms(member, 2), 2.0);
  EXPECT_EQ(free.choice().latency_ms(member, 1), 0.0);
  EXPECT_EQ(free.choice().in_flight(member), 0u);
}

}  // namespace
}  // namespace streampipe::pipeline::detail
