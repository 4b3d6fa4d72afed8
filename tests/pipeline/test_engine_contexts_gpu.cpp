// SPDX-License-Identifier: Apache-2.0
// An engine on the last GPU alone makes no context on GPU 0: not through its lanes' device
// guards, not through its workers growing pinned staging, not through its tear-down. (A
// rank of mpirun on GPU 1 would otherwise hold memory on GPU 0, another rank's.)
// ctest runs each test in a process of its own; run alone in a process where GPU 0's
// context already exists, the test is skipped.

#include "streampipe/cuda/device.hpp"
#include "streampipe/ops/pipeline_ops.hpp"
#include "streampipe/pipeline/engine.hpp"
#include "support/gpu.hpp"

#include "driver_api.hpp"

#include <cuda.h>

#include <vector>

namespace streampipe::pipeline {
namespace {

// Whether GPU `device`'s primary context exists in this process.
bool has_context(int device) {
  unsigned flags = 0;
  int active = 0;
  EXPECT_EQ(driver::resolved().primary_ctx_get_state(device, &flags, &active), CUDA_SUCCESS);
  return active != 0;
}

TEST(EngineContextsGpu, AnEngineOnTheLastGpuLeavesGpu0WithoutAContext) {
  SP_REQUIRE_GPU();
  const int last = Device::count() - 1;
  if (last == 0) GTEST_SKIP() << "one GPU: there is no other GPU to run on";
  if (driver::resolved().primary_ctx_get_state == nullptr) GTEST_SKIP() << "the driver has no cuDevicePrimaryCtxGetState";
  if (has_context(0)) GTEST_SKIP() << "GPU 0's context exists already in this process (run the test alone)";
  constexpr std::size_t kItems = 32, n = 1 << 16;
  std::vector<std::vector<float>> in(kItems, std::vector<float>(n)), out(kItems, std::vector<float>(n, -1.f));
  for (std::size_t i = 0; i < kItems; ++i)
    for (std::size_t k = 0; k < n; ++k) in[i][k] = static_cast<float>(i * n + k);
  {
    EngineOptions o;
    o.backend = Backend::gpu;
    o.devices = {last};
    Engine engine(ops::multiply_divide_operation({1, 64, 5}), o);
    for (std::size_t i = 0; i < kItems; ++i)  // pageable both ways: workers stage them
      (void)engine.submit(make_item(std::span<const float>(in[i]), std::span<float>(out[i])));
    (void)engine.drain();
  }
  EXPECT_EQ(out, in);  // x * 2 / 2
  EXPECT_TRUE(has_context(last));
  EXPECT_FALSE(has_context(0));
}

}  // namespace
}  // namespace streampipe::pipeline
