// SPDX-License-Identifier: Apache-2.0
#include "streampipe/cuda/device_buffer.hpp"
#include "streampipe/cuda/event.hpp"
#include "streampipe/cuda/stream.hpp"
#include "support/gpu.hpp"

#include <thread>

namespace streampipe {
namespace {

TEST(StreamGpu, CreateQuerySynchronize) {
  SP_REQUIRE_GPU();
  const Device d(0);
  Stream s(d);
  EXPECT_TRUE(static_cast<bool>(s));
  EXPECT_EQ(s.device_index(), 0);
  s.synchronize();
  EXPECT_TRUE(s.query());
  unsigned flags = 0;
  ASSERT_EQ(cudaStreamGetFlags(s.handle(), &flags), cudaSuccess);
  EXPECT_EQ(flags & cudaStreamNonBlocking, static_cast<unsigned>(cudaStreamNonBlocking));
}

TEST(StreamGpu, PriorityIsClampedToDeviceRange) {
  SP_REQUIRE_GPU();
  const Device d(0);
  const auto [least, greatest] = Stream::priority_range(d);
  Stream high(d, {.non_blocking = true, .priority = -1000});
  Stream low(d, {.non_blocking = false, .priority = 1000});
  EXPECT_EQ(high.priority(), greatest);
  EXPECT_EQ(low.priority(), least);
  int p = 0;
  ASSERT_EQ(cudaStreamGetPriority(high.handle(), &p), cudaSuccess);
  EXPECT_EQ(p, greatest);
}

TEST(StreamGpu, UseAfterMoveThrowsLogicError) {
  SP_REQUIRE_GPU();
  Stream a(Device(0));
  Stream b = std::move(a);
  EXPECT_FALSE(static_cast<bool>(a));  // NOLINT(bugprone-use-after-move): the point of the test
  EXPECT_THROW((void)a.ref(), std::logic_error);
  EXPECT_NO_THROW(b.synchronize());
  Stream c(Device(0));
  c = std::move(b);
  EXPECT_NO_THROW(c.synchronize());
}

TEST(EventGpu, ElapsedTimeIsPositiveAndOrdered) {
  SP_REQUIRE_GPU();
  const Device d(0);
  Stream s(d);
  Event start(d), stop(d);
  DeviceBuffer<char> buf(d, 64 << 20);
  start.record(s.ref());
  for (int i = 0; i < 4; ++i)
    SP_CUDA_CHECK(cudaMemsetAsync(buf.data(), i, buf.bytes(), s.handle()));
  stop.record(s.ref());
  stop.synchronize();
  EXPECT_TRUE(stop.query());
  const auto ms = elapsed(start, stop);
  EXPECT_GT(ms.count(), 0.0);
  EXPECT_LT(ms.count(), 10'000.0);
  EXPECT_LE(elapsed(stop, start).count(), 0.0);
}

TEST(EventGpu, NonTimingEventOrdersStreamsButCannotTime) {
  SP_REQUIRE_GPU();
  const Device d(0);
  Stream a(d), b(d);
  Event e(d, EventTiming::disabled, EventWait::blocking);
  Event t(d);
  DeviceBuffer<int> buf(d, 1 << 20);
  SP_CUDA_CHECK(cudaMemsetAsync(buf.data(), 1, buf.bytes(), a.handle()));
  e.record(a.ref());
  b.wait(e);
  int first = 0;
  SP_CUDA_CHECK(cudaMemcpyAsync(&first, buf.data(), sizeof(int), cudaMemcpyDeviceToHost, b.handle()));
  b.synchronize();
  EXPECT_EQ(first, 0x01010101);
  t.record(a.ref());
  t.synchronize();
  EXPECT_THROW((void)elapsed(e, t), std::logic_error);
}

TEST(EventGpu, ElapsedOnUnrecordedEventIsCudaError) {
  SP_REQUIRE_GPU();
  const Device d(0);
  Event a(d), b(d);
  EXPECT_THROW((void)elapsed(a, b), CudaError);
  // The failure is non-sticky: the device still works.
  Stream s(d);
  EXPECT_NO_THROW(s.synchronize());
}

TEST(EventGpu, UseAfterMoveThrowsLogicError) {
  SP_REQUIRE_GPU();
  Event a(Device(0));
  Event b = std::move(a);
  EXPECT_THROW((void)a.handle(), std::logic_error);  // NOLINT(bugprone-use-after-move)
  EXPECT_NO_THROW((void)b.handle());
}

}  // namespace
}  // namespace streampipe
