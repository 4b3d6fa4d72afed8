// SPDX-License-Identifier: Apache-2.0
#include "streampipe/cuda/device_buffer.hpp"
#include "streampipe/cuda/pinned_buffer.hpp"
#include "support/gpu.hpp"

#include <numeric>
#include <thread>
#include <vector>

namespace streampipe {
namespace {

TEST(DeviceBufferGpu, RoundTripThroughPinnedMemory) {
  SP_REQUIRE_GPU();
  const Device d(0);
  constexpr std::size_t n = 1'000'003;
  PinnedBuffer<int> in(n), out(n);
  std::iota(in.begin(), in.end(), 17);
  std::fill(out.begin(), out.end(), -1);
  DeviceBuffer<int> dev(d, n);
  EXPECT_EQ(dev.size(), n);
  EXPECT_EQ(dev.bytes(), n * sizeof(int));
  Stream s(d);
  SP_CUDA_CHECK(cudaMemcpyAsync(dev.data(), in.data(), in.bytes(), cudaMemcpyHostToDevice, s.handle()));
  SP_CUDA_CHECK(cudaMemcpyAsync(out.data(), dev.data(), dev.bytes(), cudaMemcpyDeviceToHost, s.handle()));
  s.synchronize();
  EXPECT_TRUE(std::equal(in.begin(), in.end(), out.begin()));
  EXPECT_TRUE(is_pinned(in.data()));
}

TEST(DeviceBufferGpu, OutOfMemoryIsCudaErrorAndRecoverable) {
  SP_REQUIRE_GPU();
  const Device d(0);
  const std::size_t too_much = d.memory_info().total_bytes * 4;
  try {
    DeviceBuffer<std::byte> huge(d, too_much);
    FAIL() << "allocating 4x the device memory succeeded";
  } catch (const CudaError& e) {
    EXPECT_EQ(e.status(), cudaErrorMemoryAllocation);
    EXPECT_FALSE(e.sticky());
    EXPECT_NE(std::string(e.what()).find("cudaMalloc"), std::string::npos);
  }
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);  // not left pending for the next caller
  EXPECT_NO_THROW(DeviceBuffer<float>(d, 1024));
}

TEST(DeviceBufferGpu, MoveTransfersOwnership) {
  SP_REQUIRE_GPU();
  DeviceBuffer<float> a(Device(0), 100);
  float* p = a.data();
  DeviceBuffer<float> b = std::move(a);
  EXPECT_EQ(b.data(), p);
  EXPECT_EQ(a.data(), nullptr);  // NOLINT(bugprone-use-after-move)
  EXPECT_EQ(a.size(), 0u);       // NOLINT(bugprone-use-after-move)
  a = std::move(b);
  EXPECT_EQ(a.data(), p);
}

TEST(StreamOrderedBufferGpu, AllocatesAndFreesInStreamOrder) {
  SP_REQUIRE_GPU();
  const Device d(0);
  (void)set_default_pool_release_threshold(d, std::size_t{1} << 30);
  Stream s(d);
  std::vector<int> host(4096, 7), back(4096, 0);
  for (int round = 0; round < 3; ++round) {
    StreamOrderedBuffer<int> buf(s.ref(), host.size());
    SP_CUDA_CHECK(cudaMemcpyAsync(buf.data(), host.data(), buf.bytes(), cudaMemcpyHostToDevice, s.handle()));
    SP_CUDA_CHECK(cudaMemcpyAsync(back.data(), buf.data(), buf.bytes(), cudaMemcpyDeviceToHost, s.handle()));
  }
  s.synchronize();
  EXPECT_EQ(back, host);
  cudaMemPool_t pool = nullptr;
  ASSERT_EQ(cudaDeviceGetDefaultMemPool(&pool, 0), cudaSuccess);
  std::uint64_t reserved = 0;
  ASSERT_EQ(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrReservedMemCurrent, &reserved), cudaSuccess);
  EXPECT_GT(reserved, 0u);  // kept for reuse instead of being released at the sync
}

TEST(HostRegistrationGpu, PinsAndUnpinsCallerMemory) {
  SP_REQUIRE_GPU();
  std::vector<float> v(1 << 20, 1.0f);
  EXPECT_FALSE(is_pinned(v.data()));
  {
    HostRegistration reg{std::span<float>(v)};
    EXPECT_TRUE(is_pinned(v.data()));
    EXPECT_EQ(reg.bytes(), v.size() * sizeof(float));
    HostRegistration moved = std::move(reg);
    EXPECT_EQ(reg.data(), nullptr);  // NOLINT(bugprone-use-after-move)
    EXPECT_TRUE(is_pinned(v.data()));
  }
  EXPECT_FALSE(is_pinned(v.data()));
}

TEST(HostRegistrationGpu, DeviceMappedCoversExactlyThePinnedAllocation) {
  SP_REQUIRE_GPU();
  const Device device(0);
  constexpr std::size_t kFloats = 1 << 20;  // 4 MiB: whole pages, so the allocation ends here
  PinnedBuffer<float> pinned(kFloats);
  EXPECT_TRUE(is_device_mapped(device, pinned.data(), pinned.bytes()));
  EXPECT_TRUE(is_device_mapped(device, pinned.data() + 100, 16 * sizeof(float)));
  EXPECT_FALSE(is_device_mapped(device, pinned.data() + kFloats - 8, 16 * sizeof(float)))
      << "a range running past the end of the allocation";
  EXPECT_FALSE(is_device_mapped(device, pinned.data(), 0));
  std::vector<float> v(kFloats, 1.0f);
  EXPECT_FALSE(is_device_mapped(device, v.data(), 16));
  {
    const HostRegistration reg{std::span<float>(v)};
    EXPECT_TRUE(is_device_mapped(device, v.data() + 5, (kFloats - 5) * sizeof(float)));
  }
  EXPECT_FALSE(is_device_mapped(device, v.data(), 16));
  const DeviceBuffer<float> on_device(device, 64);
  EXPECT_FALSE(is_device_mapped(device, on_device.data(), on_device.bytes()));
  // From a thread that has not called CUDA yet (no current context of its own).
  bool from_new_thread = false;
  std::thread([&] { from_new_thread = is_device_mapped(device, pinned.data(), pinned.bytes()); }).join();
  EXPECT_TRUE(from_new_thread);
}

TEST(HostRegistrationGpu, DoubleRegistrationIsCudaError) {
  SP_REQUIRE_GPU();
  std::vector<char> v(1 << 16);
  HostRegistration first(v.data(), v.size());
  EXPECT_THROW(HostRegistration(v.data(), v.size()), CudaError);
  EXPECT_THROW(HostRegistration(nullptr, 10), std::invalid_argument);
}

}  // namespace
}  // namespace streampipe
