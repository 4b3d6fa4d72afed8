// SPDX-License-Identifier: Apache-2.0
// GpuExecutorOptions::device_memory and staging_memory: every device buffer, pinned staging
// block and row table of the executor comes from the resources given, and all of it goes
// back when the executor goes; PinnedPool::global() lends nothing meanwhile. Without them
// the staging is lent by the pool as before. The model (RotatingModel) allocates nothing,
// and its batches are checked, so that the memory is seen in use.

#include "rotating_model.hpp"

#include "streampipe/cuda/pinned_pool.hpp"
#include "streampipe/serving/gpu_executor.hpp"
#include "support/counting_resources.hpp"
#include "support/gpu.hpp"

#include <algorithm>
#include <cstddef>
#include <limits>
#include <utility>
#include <vector>

namespace streampipe::serving {
namespace {

using streampipe::testing::CountingDeviceResource;
using streampipe::testing::CountingPinnedResource;
using streampipe::testing::ResourceCounts;
using test_support::RotatingModel;

constexpr std::size_t kLanes = 2, kBucket = 8;

// Runs batches of 8 and 5 rows on every lane and slot and checks their rotation.
void run_batches(GpuExecutor& exec) {
  const std::vector<std::size_t> buckets = {kBucket};
  exec.prepare(buckets);
  for (const std::size_t rows : {8u, 5u}) {
    std::vector<std::vector<float>> ins, outs;
    for (std::size_t r = 0; r < rows; ++r) {
      ins.emplace_back(RotatingModel::kWidth, static_cast<float>(r + 1));
      outs.emplace_back(RotatingModel::kWidth, std::numeric_limits<float>::quiet_NaN());
    }
    Batch batch;
    batch.bucket = kBucket;
    for (std::size_t r = 0; r < rows; ++r) {
      batch.inputs.push_back(ins[r]);
      batch.outputs.push_back(outs[r]);
    }
    for (std::size_t lane = 0; lane < kLanes; ++lane)
      for (std::size_t slot = 0; slot < kSlotsPerLane; ++slot) {
        exec.launch(lane, slot, batch);
        exec.wait(lane, slot);
        (void)exec.finish(lane, slot, batch);
        for (std::size_t r = 0; r < rows; ++r) {
          // Row r reads row r + 1; the last real row of a padded batch reads a zero row.
          const float want = r + 1 < rows ? static_cast<float>(r + 2) : (rows == kBucket ? 1.0f : 0.0f);
          EXPECT_EQ(outs[r], std::vector<float>(RotatingModel::kWidth, want)) << rows << " rows, row " << r;
        }
      }
  }
}

std::size_t pool_requests() {
  const PinnedPoolStats s = PinnedPool::global().stats();
  return s.hits + s.misses;
}

// Runs an executor on `io` with both resources; returns what each saw, once it is gone.
std::pair<ResourceCounts, ResourceCounts> through_resources(BatchIo io, bool graphs) {
  CountingDeviceResource device_memory;
  CountingPinnedResource staging;
  const std::size_t pool_before = pool_requests();
  {
    RotatingModel model(io == BatchIo::mapped);
    GpuExecutorOptions options{kLanes, graphs, report::SyncMode::spin, io};
    options.device_memory = device_memory;
    options.staging_memory = staging;
    GpuExecutor exec(Device(0), model, options);
    run_batches(exec);
    EXPECT_GT(staging.counts().live_bytes, 0u);
  }
  EXPECT_EQ(pool_requests(), pool_before) << "staging was lent by PinnedPool::global(), around the resource";
  for (const ResourceCounts& c : {device_memory.counts(), staging.counts()}) {
    EXPECT_EQ(c.deallocations, c.allocations);
    EXPECT_EQ(c.live_bytes, 0u);
    EXPECT_EQ(c.mismatches, 0);
  }
  return {device_memory.counts(), staging.counts()};
}

TEST(GpuExecutorMemory, CopiedIoTakesItsBuffersAndStagingFromTheResources) {
  SP_REQUIRE_GPU();
  for (const bool graphs : {true, false}) {
    const auto [device, pinned] = through_resources(BatchIo::copy, graphs);
    const std::size_t rows_bytes = kBucket * RotatingModel::kWidth * sizeof(float);
    // Per lane a device input and output; per slot a pinned input and output.
    EXPECT_EQ(device.sizes, std::vector<std::size_t>(2 * kLanes, rows_bytes));
    EXPECT_EQ(pinned.sizes, std::vector<std::size_t>(2 * kLanes * kSlotsPerLane, rows_bytes));
  }
}

TEST(GpuExecutorMemory, MappedIoTakesItsStagingAndRowTablesFromTheResource) {
  SP_REQUIRE_GPU();
  const auto [device, pinned] = through_resources(BatchIo::mapped, true);
  EXPECT_EQ(device.allocations, 0);  // the model reads and writes host memory itself
  // Per slot a pinned input and output, and their two row tables.
  EXPECT_EQ(pinned.allocations, static_cast<int>(4 * kLanes * kSlotsPerLane));
  const auto tables = std::count(pinned.sizes.begin(), pinned.sizes.end(), kBucket * sizeof(float*));
  EXPECT_EQ(tables, static_cast<std::ptrdiff_t>(2 * kLanes * kSlotsPerLane));
}

TEST(GpuExecutorMemory, WithoutAResourceThePoolLendsTheStaging) {
  SP_REQUIRE_GPU();
  const std::size_t pool_before = pool_requests();
  RotatingModel model(false);
  GpuExecutor exec(Device(0), model, {kLanes, true, report::SyncMode::spin, BatchIo::copy});
  run_batches(exec);
  EXPECT_EQ(pool_requests() - pool_before, 2 * kLanes * kSlotsPerLane);  // today's behaviour
}

}  // namespace
}  // namespace streampipe::serving
