// SPDX-License-Identifier: Apache-2.0
// EngineOptions::device_memory: every device allocation of an engine's GPU lanes goes
// through the resource given, and all of it goes back; EngineOptions::staging_memory: the
// pinned staging of pageable input and output comes from the host resource given. The
// counting device resource (support/counting_resources.hpp) takes its memory with
// cudaMalloc, so that the device's stream-ordered pool (what the lanes use by default) must
// see no use at all during the run: anything allocated around the resource would show there.

#include "streampipe/cuda/device_buffer.hpp"
#include "streampipe/cuda/error.hpp"
#include "streampipe/cuda/memory_resource.hpp"
#include "streampipe/ops/affine.hpp"
#include "streampipe/ops/pipeline_ops.hpp"
#include "streampipe/pipeline/engine.hpp"
#include "streampipe/pipeline/item_descriptor.hpp"
#include "support/counting_resources.hpp"
#include "support/gpu.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <random>
#include <utility>
#include <vector>

namespace streampipe::pipeline {
namespace {

using streampipe::testing::CountingDeviceResource;
using streampipe::testing::CountingPinnedResource;
using streampipe::testing::ResourceCounts;

std::uint64_t pool_attribute(cudaMemPool_t pool, cudaMemPoolAttr attr) {
  std::uint64_t v = 0;
  SP_CUDA_CHECK(cudaMemPoolGetAttribute(pool, attr, &v));
  return v;
}

// Runs `items` arrays through an affine engine made with `options` (device_memory set) and
// checks the results; returns the pool's peak use above what it held before.
std::uint64_t run_affine(EngineOptions options, std::size_t items, std::size_t n) {
  cudaMemPool_t pool = nullptr;
  SP_CUDA_CHECK(cudaDeviceGetDefaultMemPool(&pool, 0));
  const std::uint64_t used_before = pool_attribute(pool, cudaMemPoolAttrUsedMemCurrent);
  std::uint64_t zero = 0;
  SP_CUDA_CHECK(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrUsedMemHigh, &zero));  // resets the peak
  std::vector<std::vector<float>> in(items, std::vector<float>(n)), out(items, std::vector<float>(n, -1.0f));
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> dist(-1.f, 1.f);
  for (auto& v : in)
    for (auto& x : v) x = dist(rng);
  {
    Engine engine(ops::affine_operation(3.0f, -1.0f), options);
    std::vector<std::future<ItemResult>> futures;
    for (std::size_t i = 0; i < items; ++i)
      futures.push_back(engine.submit(make_item(std::span<const float>(in[i]), std::span<float>(out[i]))));
    engine.drain();
    std::vector<float> want(n);
    for (std::size_t i = 0; i < items; ++i) {
      const ItemResult r = futures[i].get();
      EXPECT_TRUE(r.ok()) << r.error;
      ops::affine_host(in[i], want, 3.0f, -1.0f);
      EXPECT_EQ(std::memcmp(out[i].data(), want.data(), n * sizeof(float)), 0) << i;
    }
  }
  return pool_attribute(pool, cudaMemPoolAttrUsedMemHigh) - used_before;
}

EngineOptions gpu_with(DeviceMemoryResource& resource, int lanes) {
  EngineOptions o;
  o.backend = Backend::gpu;
  o.devices = {0};
  o.lanes = lanes;
  o.device_memory = resource;
  return o;
}

// Runs the engine; checks that the stream-ordered pool saw no use (nothing went around
// `resource`) and that everything allocated came back. Returns the counts.
ResourceCounts expect_all_through(const CountingDeviceResource& resource, const EngineOptions& options,
                                            std::size_t items, std::size_t n) {
  const std::uint64_t pool_peak = run_affine(options, items, n);
  const auto c = resource.counts();
  EXPECT_EQ(pool_peak, 0u) << "device memory was taken from the stream-ordered pool, around the resource";
  EXPECT_EQ(c.deallocations, c.allocations);
  EXPECT_EQ(c.live_bytes, 0u);
  EXPECT_EQ(c.mismatches, 0);
  return c;
}

TEST(EngineMemoryGpu, EveryDeviceAllocationGoesThroughTheResource) {
  SP_REQUIRE_GPU();
  CountingDeviceResource resource;
  EngineOptions o = gpu_with(resource, 3);
  o.batch_items = 4;  // the lanes then keep a descriptor table on the device too
  const auto c = expect_all_through(resource, o, 40, 50'001);
  // Per lane at least an input region, an output region and a descriptor table.
  EXPECT_GE(c.allocations, 3 * 3);
  EXPECT_EQ(std::count(c.sizes.begin(), c.sizes.end(), 4 * sizeof(ItemDescriptor)), 3);
}

TEST(EngineMemoryGpu, GraphReplayTakesItsRegionsFromTheResource) {
  SP_REQUIRE_GPU();
  CountingDeviceResource resource;
  EngineOptions o = gpu_with(resource, 2);
  o.use_graphs = true;
  EXPECT_GE(expect_all_through(resource, o, 30, 10'007).allocations, 2 * 2);
}

TEST(EngineMemoryGpu, PageableInputIsStagedThroughTheHostResource) {
  SP_REQUIRE_GPU();
  CountingDeviceResource device_memory;
  CountingPinnedResource staging;
  EngineOptions o = gpu_with(device_memory, 2);
  o.staging_memory = staging;
  (void)run_affine(o, 20, 30'011);  // std::vector in and out: both staged
  const ResourceCounts c = staging.counts();
  EXPECT_GE(c.allocations, 2);  // an input block and an output staging at least
  EXPECT_EQ(c.live_bytes, 0u);
  EXPECT_EQ(c.mismatches, 0);
}

TEST(EngineMemoryGpu, WithoutAResourceTheLanesUseTheStreamOrderedPool) {
  SP_REQUIRE_GPU();
  EngineOptions o;
  o.backend = Backend::gpu;
  o.devices = {0};
  o.lanes = 2;
  EXPECT_GT(run_affine(o, 10, 10'007), 0u);  // today's behaviour: cudaMallocAsync
}

}  // namespace
}  // namespace streampipe::pipeline
