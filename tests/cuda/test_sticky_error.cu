// SPDX-License-Identifier: Apache-2.0
// A kernel that writes through a wild pointer corrupts the context: the error must come
// back as a sticky CudaError, and later calls must keep failing (never silently cleared).
#include "streampipe/cuda/device_buffer.hpp"
#include "streampipe/cuda/launch.hpp"
#include "support/gpu.hpp"

namespace streampipe {
namespace {

__global__ void write_wild(int* p) { p[threadIdx.x] = 1; }

TEST(StickyErrorGpu, IllegalAddressIsStickyAndStays) {
  SP_REQUIRE_GPU();
  const Device d(0);
  Stream s(d);
  LaunchConfig cfg;
  cfg.block = dim3(32);
  launch(s.ref(), cfg, write_wild, reinterpret_cast<int*>(0x10));
  try {
    s.synchronize();
    FAIL() << "the illegal write was not reported";
  } catch (const CudaError& e) {
    EXPECT_TRUE(e.sticky()) << e.what();
    EXPECT_NE(std::string(e.what()).find("sticky"), std::string::npos);
  }
  // Still broken afterwards: the library did not clear it, and the runtime cannot.
  EXPECT_THROW(DeviceBuffer<int>(d, 16), CudaError);
}

}  // namespace
}  // namespace streampipe
