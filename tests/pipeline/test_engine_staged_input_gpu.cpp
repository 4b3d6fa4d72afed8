// SPDX-License-Identifier: Apache-2.0
// Operation::reads_staged_input: an operation whose stream work reads the host staging that
// produce filled (as nvJPEG reads JPEG bitstreams) gets it intact even when the staging
// budget is spent and other items wait for blocks.

#include "streampipe/cuda/error.hpp"
#include "streampipe/ops/pipeline_ops.hpp"
#include "streampipe/pipeline/engine.hpp"
#include "support/gpu.hpp"

#include <cuda_runtime_api.h>

#include <cstring>
#include <mutex>
#include <vector>

namespace streampipe::pipeline {
namespace {

// Runs `items` arrays of floats through an operation that first keeps its stream busy (~10 ms
// of kernel), then copies its output from the host staging; returns how many came back wrong.
std::size_t wrong_outputs() {
  constexpr std::size_t kItems = 48, n = 1 << 18;  // 1 MiB each
  std::mutex mutex;
  std::vector<const std::byte*> staged(kItems, nullptr);  // by item index
  Operation slow = ops::multiply_divide_operation({1, 64, 500});
  Operation op;
  op.name = "busy kernel, then a copy from the host staging";
  op.device = [&](const Batch& b) {
    slow.device(b);  // the stream is now busy for a while
    const std::byte* host = nullptr;
    {
      const std::lock_guard lock(mutex);
      host = staged.at(b.index(0));
    }
    SP_CUDA_CHECK(cudaMemcpyAsync(b.out(), host, b.in_bytes(), cudaMemcpyHostToDevice, b.stream().handle()));
  };
  op.host = slow.host;
  op.reads_staged_input = true;
  EngineOptions o;
  o.backend = Backend::gpu;
  o.lanes = 4;
  o.depth = 4;                 // 16 slots
  o.staging_bytes = 3 * n * 4; // 3 blocks: submits wait for blocks to come back
  Engine engine(op, o);
  std::vector<std::vector<float>> out(kItems, std::vector<float>(n, -1.f));
  std::size_t wrong = 0;
  for (std::size_t i = 0; i < kItems; ++i) {
    Item item;
    item.produce = [&, i](StagingInput& s) {
      const auto in = s.allocate(n * 4, n * 4);
      auto* f = reinterpret_cast<float*>(in.data());
      for (std::size_t k = 0; k < n; ++k) f[k] = static_cast<float>(i);
      const std::lock_guard lock(mutex);
      staged[i] = in.data();
    };
    item.consume = [&, i](std::span<const std::byte> bytes) {
      std::memcpy(out[i].data(), bytes.data(), n * 4);
    };
    (void)engine.submit(std::move(item));
  }
  const auto stats = engine.drain();
  EXPECT_EQ(stats.done, kItems);
  for (std::size_t i = 0; i < kItems; ++i)
    if (out[i].front() != static_cast<float>(i) || out[i].back() != static_cast<float>(i)) ++wrong;
  return wrong;
}

TEST(EngineStagedInputGpu, AnOperationReadingTheStagingOnItsStreamGetsItIntact) {
  SP_REQUIRE_GPU();
  EXPECT_EQ(wrong_outputs(), 0u);
}

}  // namespace
}  // namespace streampipe::pipeline
