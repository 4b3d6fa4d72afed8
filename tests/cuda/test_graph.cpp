// SPDX-License-Identifier: Apache-2.0
#include "streampipe/cuda/device_buffer.hpp"
#include "streampipe/cuda/graph.hpp"
#include "support/gpu.hpp"

#include <vector>

namespace streampipe {
namespace {

// Captures "memset buf to value" so the graph's effect is visible.
Graph capture_memset(StreamRef s, int* buf, std::size_t n, int value) {
  GraphCapture capture(s);
  SP_CUDA_CHECK(cudaMemsetAsync(buf, value, n * sizeof(int), s.handle()));
  return capture.end();
}

TEST(GraphGpu, CaptureInstantiateLaunch) {
  SP_REQUIRE_GPU();
  const Device d(0);
  Stream s(d);
  DeviceBuffer<int> buf(d, 1000);
  const Graph g = capture_memset(s.ref(), buf.data(), buf.size(), 0x11);
  EXPECT_EQ(g.node_count(), 1u);
  GraphExec exec(g);
  exec.launch(s.ref());
  std::vector<int> host(buf.size());
  SP_CUDA_CHECK(cudaMemcpyAsync(host.data(), buf.data(), buf.bytes(), cudaMemcpyDeviceToHost, s.handle()));
  s.synchronize();
  for (int v : host) ASSERT_EQ(v, 0x11111111);
}

TEST(GraphGpu, UpdateSameTopologyInPlace) {
  SP_REQUIRE_GPU();
  const Device d(0);
  Stream s(d);
  DeviceBuffer<int> a(d, 500), b(d, 500);
  GraphExec exec(capture_memset(s.ref(), a.data(), a.size(), 1));
  EXPECT_TRUE(exec.update(capture_memset(s.ref(), b.data(), b.size(), 2)));
  exec.launch(s.ref());
  int first = 0;
  SP_CUDA_CHECK(cudaMemcpyAsync(&first, b.data(), sizeof(int), cudaMemcpyDeviceToHost, s.handle()));
  s.synchronize();
  EXPECT_EQ(first, 0x02020202);
}

TEST(GraphGpu, UpdateWithDifferentTopologyIsRefused) {
  SP_REQUIRE_GPU();
  const Device d(0);
  Stream s(d);
  DeviceBuffer<int> a(d, 500);
  GraphExec exec(capture_memset(s.ref(), a.data(), a.size(), 1));
  Graph two;
  {
    GraphCapture capture(s.ref());
    SP_CUDA_CHECK(cudaMemsetAsync(a.data(), 3, a.bytes(), s.handle()));
    SP_CUDA_CHECK(cudaMemsetAsync(a.data(), 4, a.bytes(), s.handle()));
    two = capture.end();
  }
  EXPECT_EQ(two.node_count(), 2u);
  EXPECT_FALSE(exec.update(two));
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
  exec.launch(s.ref());  // still the original graph
  s.synchronize();
}

TEST(GraphGpu, AbandonedCaptureLeavesStreamUsable) {
  SP_REQUIRE_GPU();
  const Device d(0);
  Stream s(d);
  DeviceBuffer<int> a(d, 10);
  try {
    GraphCapture capture(s.ref());
    SP_CUDA_CHECK(cudaMemsetAsync(a.data(), 0, a.bytes(), s.handle()));
    throw std::runtime_error("abandon");
  } catch (const std::runtime_error&) {
  }
  cudaStreamCaptureStatus status{};
  ASSERT_EQ(cudaStreamIsCapturing(s.handle(), &status), cudaSuccess);
  EXPECT_EQ(status, cudaStreamCaptureStatusNone);
  EXPECT_NO_THROW(s.synchronize());
}

TEST(GraphGpu, EmptyHandlesThrowLogicError) {
  SP_REQUIRE_GPU();
  Graph g;
  EXPECT_THROW((void)g.handle(), std::logic_error);
  GraphExec e;
  Stream s(Device(0));
  EXPECT_THROW(e.launch(s.ref()), std::logic_error);
}

}  // namespace
}  // namespace streampipe
