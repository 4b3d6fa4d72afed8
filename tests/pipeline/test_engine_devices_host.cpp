// SPDX-License-Identifier: Apache-2.0
// An engine over a set of devices, on the host backend's simulated devices: items spread
// over every device, a faster device takes more of them, in-order delivery holds across
// devices, each result and timeline row names its device, and a device lost to a sticky
// error leaves the set while the run goes on (its items failed, or run again elsewhere).

#include "simulated_set.hpp"

#include "streampipe/cuda/error.hpp"
#include "streampipe/pipeline/engine.hpp"

#include <nlohmann/json.hpp>

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <map>
#include <set>
#include <string>
#include <thread>

namespace streampipe::pipeline {
namespace {

using streampipe::testing::result_within;

using testing::DeliveryOrder;
using testing::ItemsRun;
using testing::run_items;
using SimulatedDevices = testing::SimulatedSet;

EngineOptions simulated(std::vector<int> devices, int lanes = 2) {
  EngineOptions o;
  o.backend = Backend::gpu;
  o.simulate_gpus = true;
  o.devices = std::move(devices);
  o.lanes = lanes;
  o.depth = 2;
  o.host_threads = 3;
  return o;
}

TEST(EngineDevicesHost, ItemsSpreadOverEveryDeviceAndNameIt) {
  SimulatedDevices sim;
  for (int d = 0; d < 3; ++d) sim.delay[d] = std::chrono::microseconds(300);
  Engine engine(sim.operation(), simulated({0, 1, 2}));
  const auto members = engine.wait_until_started();
  ASSERT_EQ(members.size(), 3u);
  for (int d = 0; d < 3; ++d) {
    EXPECT_EQ(members[d].device, d);
    EXPECT_EQ(members[d].state, DeviceReport::State::ready);
  }
  EXPECT_NE(engine.describe().find("simulated GPU 2: 2 lanes"), std::string::npos) << engine.describe();
  const ItemsRun run = run_items(engine, 120);
  std::map<int, int> per_device;
  ASSERT_NO_FATAL_FAILURE(run.expect_all_right(120, [&](const ItemResult& r) {
    ++per_device[r.device];
    // Engine-wide lanes: device position x lanes + the device's own lane.
    EXPECT_EQ(r.lane / 2, r.device);
  }));
  ASSERT_EQ(per_device.size(), 3u);
  // Each takes work in proportion to its measured speed; three equal devices measure apart
  // on a loaded host (a sanitizer's build on two cores gave 17 of 120), so the bound is a
  // quarter of an equal share: spread, not equal.
  for (const auto& [device, n] : per_device) EXPECT_GE(n, 10) << "device " << device;
}

TEST(EngineDevicesHost, AFasterDeviceTakesMoreItems) {
  SimulatedDevices sim;
  sim.delay[0] = std::chrono::microseconds(500);
  sim.delay[1] = std::chrono::microseconds(4000);  // eight times slower
  Engine engine(sim.operation(), simulated({0, 1}));
  const ItemsRun run = run_items(engine, 200);
  std::map<int, int> per_device;
  for (const auto& r : run.results) {
    ASSERT_TRUE(r.ok()) << r.error;
    ++per_device[r.device];
  }
  // A round-robin share would give 100 each; finishing first gives about 8 to 1.
  EXPECT_GT(per_device[0], 3 * per_device[1]) << per_device[0] << " vs " << per_device[1];
  EXPECT_GT(per_device[1], 0);
}

TEST(EngineDevicesHost, InOrderDeliveryHoldsAcrossDevices) {
  SimulatedDevices sim;
  sim.delay[0] = std::chrono::microseconds(100);
  sim.delay[1] = std::chrono::microseconds(2000);
  auto options = simulated({0, 1});
  DeliveryOrder order;
  std::set<int> devices_seen;
  options.delivery = Delivery::in_order;
  options.on_complete = order.callback([&](const ItemResult& r) { devices_seen.insert(r.device); });
  Engine engine(sim.operation(), options);
  const ItemsRun run = run_items(engine, 100);
  order.expect_in_order(100);
  EXPECT_EQ(devices_seen, (std::set<int>{0, 1}));
}

TEST(EngineDevicesHost, TheTimelineHasRowsPerDeviceAndLane) {
  SimulatedDevices sim;
  // Both started and each item taking a while: neither device can take every item.
  for (int d = 0; d < 2; ++d) sim.delay[d] = std::chrono::microseconds(200);
  Engine engine(sim.operation(), simulated({0, 1}, 1));
  (void)engine.wait_until_started();
  (void)run_items(engine, 40);
  std::set<std::string> rows;
  const nlohmann::json trace = engine.timeline().chrome_trace("test");
  for (const auto& e : trace["traceEvents"])
    if (e["name"] == "thread_name") rows.insert(e["args"]["name"].get<std::string>());
  EXPECT_TRUE(rows.count("GPU 0 copy H2D") && rows.count("GPU 1 copy H2D")) << nlohmann::json(rows).dump();
  EXPECT_TRUE(rows.count("GPU 0 lane 0 compute") && rows.count("GPU 1 lane 1 compute"))
      << nlohmann::json(rows).dump();
}

TEST(EngineDevicesHost, ALostDeviceLeavesTheSetAndTheRunGoesOn) {
  SimulatedDevices sim;
  sim.lost_device = 1;
  sim.lose_after = 3;
  for (int d = 0; d < 3; ++d) sim.delay[d] = std::chrono::microseconds(200);
  Engine engine(sim.operation(), simulated({0, 1, 2}));
  const ItemsRun run = run_items(engine, 150);
  ASSERT_EQ(run.results.size(), 150u);
  std::size_t failed = 0;
  for (std::size_t i = 0; i < run.results.size(); ++i) {
    const auto& r = run.results[i];
    if (r.ok()) {
      EXPECT_TRUE(run.plus_one(i)) << i;
      continue;
    }
    ++failed;
    // The failure names the item, the device and the CUDA error.
    EXPECT_NE(r.error.find("on simulated GPU 1 failed"), std::string::npos) << r.error;
    EXPECT_NE(r.error.find("illegal memory access"), std::string::npos) << r.error;
  }
  // Only what device 1 held when it failed: at most its slots (2 lanes x depth 2).
  EXPECT_GE(failed, 1u);
  EXPECT_LE(failed, 4u);
  // Nothing reached device 1 after its loss, and later items still ran.
  EXPECT_LE(sim.ran_on_lost.load(), 3 + 4);
  EXPECT_TRUE(run.results.back().ok()) << run.results.back().error;
}

TEST(EngineDevicesHost, ItemsOfALostDeviceRunAgainOnTheOthersWhenAsked) {
  SimulatedDevices sim;
  sim.lost_device = 0;
  sim.lose_after = 2;
  for (int d = 0; d < 2; ++d) sim.delay[d] = std::chrono::microseconds(200);
  auto options = simulated({0, 1});
  options.rerun_on_device_loss = true;
  options.delivery = Delivery::in_order;
  DeliveryOrder order;
  options.on_complete = order.callback();
  Engine engine(sim.operation(), options);
  const ItemsRun run = run_items(engine, 80);
  ASSERT_NO_FATAL_FAILURE(run.expect_all_right(80));
  order.expect_in_order(80);
}

TEST(EngineDevicesHost, WhenEveryDeviceIsLostEverythingLeftFails) {
  SimulatedDevices sim;
  sim.lost_device = 0;
  Engine engine(sim.operation(), simulated({0}));
  const ItemsRun run = run_items(engine, 30);
  ASSERT_EQ(run.results.size(), 30u);
  for (const auto& r : run.results) EXPECT_FALSE(r.ok());
  EXPECT_NE(run.results.back().error.find("the device failed earlier"), std::string::npos) << run.results.back().error;
  std::vector<std::byte> in(8), out(8);
  auto late = engine.submit(make_item(std::span<const std::byte>(in), std::span<std::byte>(out)));
  const auto r = result_within(late);
  ASSERT_TRUE(r);
  EXPECT_FALSE(r->ok());
}

TEST(EngineDevicesHost, ANegativeDeviceIsRefused) {
  SimulatedDevices sim;
  EXPECT_THROW(Engine(sim.operation(), simulated({0, -1})), std::invalid_argument);
}

// A set that may hold a real GPU asks for its lanes' hardware queues; the host backend and
// simulated GPUs ask for none (no CUDA call is made).
TEST(EngineDevices, HardwareQueuesAskedForWhereARealGpuMayRun) {
  const char* name = "CUDA_DEVICE_MAX_CONNECTIONS";
  const char* before = std::getenv(name);
  const std::string saved = before ? before : "";
  const auto asked = [&](const EngineOptions& o) {
    EXPECT_EQ(::unsetenv(name), 0);
    request_lane_queues(o);
    const char* value = std::getenv(name);
    return std::string(value ? value : "none");
  };
  EngineOptions o;
  o.lanes = 4;
  EXPECT_EQ(asked(o), "8");  // automatic: the GPUs it finds
  o.lanes = 16;
  EXPECT_EQ(asked(o), "32");
  o.backend = Backend::gpu;
  o.lanes = 8;
  EXPECT_EQ(asked(o), "8");
  EXPECT_EQ(asked(simulated({0, 1}, 16)), "none");
  o.backend = Backend::host;
  EXPECT_EQ(asked(o), "none");
  if (before)
    ::setenv(name, saved.c_str(), 1);
  else
    ::unsetenv(name);
}

}  // namespace
}  // namespace streampipe::pipeline
