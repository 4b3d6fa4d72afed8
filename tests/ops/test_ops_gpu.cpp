// SPDX-License-Identifier: Apache-2.0
#include "streampipe/cuda/device_buffer.hpp"
#include "streampipe/ops/affine.hpp"
#include "streampipe/ops/multiply_divide.hpp"
#include "streampipe/ops/rgb_to_gray.hpp"
#include "support/gpu.hpp"

#include <cstring>
#include <random>
#include <vector>

namespace streampipe::ops {
namespace {

template <typename T>
std::vector<T> run_on_device(StreamRef s, const std::vector<T>& host_in, std::size_t out_count,
                             std::size_t offset, auto&& op) {
  const Device d = s.device();
  // Offsets make the device pointers misaligned to exercise the scalar paths.
  DeviceBuffer<T> in(d, host_in.size() + offset), out(d, out_count + offset);
  SP_CUDA_CHECK(cudaMemcpyAsync(in.data() + offset, host_in.data(), host_in.size() * sizeof(T),
                                cudaMemcpyHostToDevice, s.handle()));
  SP_CUDA_CHECK(cudaMemsetAsync(out.data(), 0xff, out.bytes(), s.handle()));  // poison
  op(in.data() + offset, out.data() + offset);
  std::vector<T> result(out_count);
  SP_CUDA_CHECK(cudaMemcpyAsync(result.data(), out.data() + offset, out_count * sizeof(T),
                                cudaMemcpyDeviceToHost, s.handle()));
  s.synchronize();
  return result;
}

TEST(OpsGpu, RgbToGrayMatchesHostExactly) {
  SP_REQUIRE_GPU();
  Stream s(Device(0));
  std::mt19937 rng(42);
  for (std::size_t pixels : {std::size_t{1}, std::size_t{3}, std::size_t{1021}, std::size_t{1920 * 1080 + 7}}) {
    for (std::size_t offset : {0u, 1u}) {
      std::vector<std::uint8_t> rgb(3 * pixels);
      for (auto& b : rgb) b = static_cast<std::uint8_t>(rng());
      std::vector<std::uint8_t> want(pixels);
      rgb_to_gray_host(rgb, want);
      const auto got = run_on_device(s.ref(), rgb, pixels, offset, [&](const std::uint8_t* in, std::uint8_t* out) {
        rgb_to_gray(s.ref(), in, out, pixels);
      });
      ASSERT_EQ(got, want) << pixels << " pixels, offset " << offset;
    }
  }
}

TEST(OpsGpu, AffineMatchesHostBitForBit) {
  SP_REQUIRE_GPU();
  Stream s(Device(0));
  std::mt19937 rng(7);
  std::normal_distribution<float> dist(0.0f, 100.0f);
  for (std::size_t n : {std::size_t{1}, std::size_t{5}, std::size_t{1 << 20}, std::size_t{(1 << 20) + 3}}) {
    for (std::size_t offset : {0u, 1u}) {
      std::vector<float> x(n);
      for (auto& v : x) v = dist(rng);
      std::vector<float> want(n);
      affine_host(x, want, 1.25f, -0.75f);
      const auto got = run_on_device(s.ref(), x, n, offset, [&](const float* in, float* out) {
        affine(s.ref(), in, out, n, 1.25f, -0.75f);
      });
      ASSERT_EQ(std::memcmp(got.data(), want.data(), n * sizeof(float)), 0) << n << " offset " << offset;
    }
  }
}

TEST(OpsGpu, MultiplyDivideSingleAndBatched) {
  SP_REQUIRE_GPU();
  Stream s(Device(0));
  constexpr std::size_t n = 10'007, arrays = 13, stride = 10'240;
  std::vector<float> x(arrays * stride);
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> dist(-1e3f, 1e3f);
  for (auto& v : x) v = dist(rng);
  const auto single = run_on_device(s.ref(), x, n, 0, [&](const float* in, float* out) {
    multiply_divide(s.ref(), in, out, n);
  });
  EXPECT_EQ(std::memcmp(single.data(), x.data(), n * sizeof(float)), 0);
  // Batched: one block per array, arrays of different lengths at aligned offsets.
  std::vector<pipeline::ItemDescriptor> items;
  for (std::size_t a = 0; a < arrays; ++a)
    items.push_back({a * stride * 4, (n - a * 7) * 4, a * stride * 4, (n - a * 7) * 4});
  DeviceBuffer<pipeline::ItemDescriptor> d_items(Device(0), items.size());
  SP_CUDA_CHECK(cudaMemcpyAsync(d_items.data(), items.data(), d_items.bytes(), cudaMemcpyHostToDevice, s.handle()));
  const auto batched = run_on_device(s.ref(), x, x.size(), 0, [&](const float* in, float* out) {
    multiply_divide_batched(s.ref(), d_items.data(), arrays, reinterpret_cast<const std::byte*>(in),
                            reinterpret_cast<std::byte*>(out));
  });
  for (std::size_t a = 0; a < arrays; ++a) {
    const std::size_t len = n - a * 7;
    ASSERT_EQ(std::memcmp(batched.data() + a * stride, x.data() + a * stride, len * sizeof(float)), 0) << a;
    // Past each array's end the poison must remain: nothing wrote outside the item.
    std::uint32_t after = 0;
    std::memcpy(&after, batched.data() + a * stride + len, 4);
    ASSERT_EQ(after, 0xffffffffu) << a;
  }
}

}  // namespace
}  // namespace streampipe::ops
