// SPDX-License-Identifier: Apache-2.0
// ElementwiseKernel and ReductionKernel on a device against CPU references, on random data
// of odd sizes, through both the vectorized (aligned) and the plain (misaligned) paths.
#include "device_arrays.hpp"
#include "support/gpu.hpp"

#include "streampipe/cuda/device_buffer.hpp"
#include "streampipe/cuda/error.hpp"
#include "streampipe/cuda/stream.hpp"
#include "streampipe/jit/elementwise.hpp"
#include "streampipe/jit/errors.hpp"
#include "streampipe/jit/reduction.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <optional>
#include <random>
#include <thread>
#include <vector>

using namespace streampipe;
using namespace streampipe::jit;
using namespace streampipe::jit::test_support;

namespace {

const std::size_t sizes[] = {1, 2, 3, 5, 7, 255, 1023, 4099, 1000003};

// Each test on device 0 with a stream of its own; its kernels compile in memory only.
class GeneratedOnGpu : public ::testing::Test {
 protected:
  void SetUp() override {
    SP_REQUIRE_GPU();
    gpu_.emplace(0);
    stream_.emplace(*gpu_);
  }
  [[nodiscard]] const Device& gpu() const { return *gpu_; }
  [[nodiscard]] StreamRef stream() const { return stream_->ref(); }
  void synchronize() { stream_->synchronize(); }
  // ElementwiseOptions or ReductionOptions whose kernels never touch the disk cache.
  template <typename Options>
  [[nodiscard]] static Options in_memory() {
    Options o;
    o.cache = memory_only();
    return o;
  }

 private:
  std::optional<Device> gpu_;
  std::optional<Stream> stream_;
};

class JitElementwise : public GeneratedOnGpu {};
class JitReduction : public GeneratedOnGpu {};

TEST_F(JitElementwise, AddMatchesCpuAlignedAndMisaligned) {
  const ElementwiseKernel add("const float* a, const float* b, float* c", "c[i] = a[i] + b[i]",
                              in_memory<ElementwiseOptions>());
  for (const std::size_t n : sizes)
    for (const std::size_t offset : {std::size_t{0}, std::size_t{1}}) {
      const auto a = random_floats(n, 1), b = random_floats(n, 2);
      auto da = upload(gpu(), a, offset), db = upload(gpu(), b, offset);
      DeviceBuffer<float> dc(gpu(), n + offset);
      SP_CUDA_CHECK(cudaMemset(dc.data(), 0xff, dc.bytes()));
      const ElementwiseLaunch l = add(stream(), n, da.data() + offset, db.data() + offset, dc.data() + offset);
      EXPECT_EQ(l.vectorized, offset == 0) << "n=" << n;
      synchronize();
      const auto c = download(dc.data(), n + offset);
      for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(c[i + offset], a[i] + b[i]) << "n=" << n << " offset=" << offset << " i=" << i;
      if (offset == 1) {
        std::uint32_t guard = 0;
        std::memcpy(&guard, &c[0], 4);
        EXPECT_EQ(guard, 0xffffffffu) << "nothing written before the array";
      }
    }
}

TEST_F(JitElementwise, ScalarsMixedTypesAndConditionalWrites) {
  auto o = in_memory<ElementwiseOptions>();
  o.name = "masked_axpy";
  o.compile_options = {"--fmad=false"};  // exact comparison with the CPU
  const ElementwiseKernel k("const unsigned char* m, const double* x, float* y, float alpha",
                            "if (m[i]) y[i] = alpha * (float)x[i] + y[i]", o);
  ASSERT_TRUE(k.vector_plan().possible) << k.vector_plan().reason;
  std::mt19937 rng(3);
  for (const std::size_t n : sizes) {
    std::vector<unsigned char> m(n);
    std::vector<double> x(n);
    for (std::size_t i = 0; i < n; ++i) {
      m[i] = static_cast<unsigned char>(rng() % 2);
      x[i] = static_cast<double>(rng() % 2000) / 7.0;
    }
    const auto y0 = random_floats(n, 4);
    auto dm = upload(gpu(), m);
    auto dx = upload(gpu(), x);
    auto dy = upload(gpu(), y0);
    k(stream(), n, dm.data(), dx.data(), dy.data(), 1.5);  // double converted to the float parameter
    synchronize();
    const auto y = download(dy.data(), n);
    for (std::size_t i = 0; i < n; ++i) {
      const float expect = m[i] ? 1.5f * static_cast<float>(x[i]) + y0[i] : y0[i];
      ASSERT_EQ(y[i], expect) << "n=" << n << " i=" << i;
    }
  }
}

TEST_F(JitElementwise, IntegerStencilUsesIndexAndSize) {
  const ElementwiseKernel k("const int* a, int* c", "c[i] = a[n - 1 - i] * 3 + (int)i",
                            in_memory<ElementwiseOptions>());
  EXPECT_FALSE(k.vector_plan().possible);
  for (const std::size_t n : {std::size_t{1}, std::size_t{4099}, std::size_t{77777}}) {
    std::vector<int> a(n);
    std::mt19937 rng(11);
    for (auto& v : a) v = static_cast<int>(rng() % 100000) - 50000;
    auto da = upload(gpu(), a);
    DeviceBuffer<int> dc(gpu(), n);
    SP_CUDA_CHECK(cudaMemset(dc.data(), 0xff, dc.bytes()));
    EXPECT_FALSE(k(stream(), n, da.data(), dc.data()).vectorized);
    synchronize();
    const auto c = download(dc.data(), n);
    for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(c[i], a[n - 1 - i] * 3 + static_cast<int>(i)) << i;
  }
}

TEST_F(JitElementwise, ZeroSizeLaunchesNothingAndWrongArgumentsThrow) {
  const ElementwiseKernel add("const float* a, const float* b, float* c", "c[i] = a[i] + b[i]",
                              in_memory<ElementwiseOptions>());
  DeviceBuffer<float> d(gpu(), 4);
  DeviceBuffer<double> e(gpu(), 4);
  EXPECT_FALSE(add(stream(), 0, d.data(), d.data(), d.data()).launched);
  EXPECT_THROW(add(stream(), 4, d.data(), d.data()), JitError);
  EXPECT_THROW(add(stream(), 4, d.data(), e.data(), d.data()), JitError);
  EXPECT_THROW(add(stream(), 4, d.data(), d.data(), static_cast<const float*>(d.data())), JitError);
  synchronize();
}

TEST_F(JitElementwise, ConcurrentStreamsFromThreads) {
  const ElementwiseKernel scale("float* x, float f", "x[i] = x[i] * f", in_memory<ElementwiseOptions>());
  const std::size_t n = 300001;
  std::vector<std::vector<float>> inputs;
  std::vector<DeviceBuffer<float>> buffers;
  for (unsigned t = 0; t < 4; ++t) {
    inputs.push_back(random_floats(n, 20 + t));
    buffers.push_back(upload(gpu(), inputs.back()));
  }
  std::vector<std::string> errors(4);
  std::vector<std::thread> threads;
  for (unsigned t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      try {
        Stream s(gpu());
        scale(s.ref(), n, buffers[t].data(), static_cast<float>(t + 2));
        s.synchronize();
      } catch (const std::exception& e) {
        errors[t] = e.what();
      }
    });
  for (auto& t : threads) t.join();
  for (unsigned t = 0; t < 4; ++t) {
    ASSERT_TRUE(errors[t].empty()) << errors[t];
    const auto y = download(buffers[t].data(), n);
    for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(y[i], inputs[t][i] * static_cast<float>(t + 2)) << t << " " << i;
  }
}

TEST_F(JitReduction, FloatSumMatchesCpuOnOddSizes) {
  const ReductionKernel sum("float", "const float* x", "x[i]", "a + b", "0.0f", in_memory<ReductionOptions>());
  DeviceBuffer<float> out(gpu(), 1);
  for (const std::size_t n : {std::size_t{1}, std::size_t{3}, std::size_t{1023}, std::size_t{1000003}, std::size_t{33554467}})
    for (const std::size_t offset : {std::size_t{0}, std::size_t{1}}) {
      const auto x = random_floats(n, 5, 0.0f, 1.0f);
      auto dx = upload(gpu(), x, offset);
      SP_CUDA_CHECK(cudaMemset(out.data(), 0xff, 4));
      const ReductionLaunch l = sum(stream(), n, out.data(), dx.data() + offset);
      EXPECT_EQ(l.vectorized, offset == 0);
      synchronize();
      double reference = 0;
      for (const float v : x) reference += v;
      const float got = download(out.data(), 1)[0];
      EXPECT_NEAR(got, reference, 1e-5 * reference + 1e-6) << "n=" << n << " offset=" << offset;
    }
}

TEST_F(JitReduction, IntegerReductionsAreExact) {
  auto o = in_memory<ReductionOptions>();
  o.name = "wrapping_sum";
  const ReductionKernel sum("unsigned int", "const unsigned int* v, unsigned int bias", "v[i] * 2654435761u + bias",
                            "a + b", "0u", o);
  o.name = "max_abs";
  const ReductionKernel max_abs("int", "const int* v", "abs(v[i])", "max(a, b)", "0", o);
  DeviceBuffer<unsigned> out_u(gpu(), 1);
  DeviceBuffer<int> out_i(gpu(), 1);
  std::mt19937 rng(13);
  for (const std::size_t n : sizes) {
    std::vector<unsigned> v(n);
    std::vector<int> w(n);
    for (std::size_t i = 0; i < n; ++i) {
      v[i] = static_cast<unsigned>(rng());
      w[i] = static_cast<int>(rng() % 2000001) - 1000000;
    }
    auto dv = upload(gpu(), v);
    auto dw = upload(gpu(), w);
    sum(stream(), n, out_u.data(), dv.data(), 17u);
    max_abs(stream(), n, out_i.data(), dw.data());
    synchronize();
    unsigned ref_sum = 0;
    int ref_max = 0;
    for (std::size_t i = 0; i < n; ++i) {
      ref_sum += v[i] * 2654435761u + 17u;
      ref_max = std::max(ref_max, std::abs(w[i]));
    }
    EXPECT_EQ(download(out_u.data(), 1)[0], ref_sum) << n;
    EXPECT_EQ(download(out_i.data(), 1)[0], ref_max) << n;
  }
}

TEST_F(JitReduction, PostMapEmptyInputAndResultSize) {
  auto o = in_memory<ReductionOptions>();
  o.name = "distance";
  o.post_map = "sqrt(a)";
  const ReductionKernel dist("double", "const double* x, const double* y", "(x[i] - y[i]) * (x[i] - y[i])", "a + b",
                             "0.0", o);
  EXPECT_EQ(dist.result_size(gpu()), sizeof(double));
  DeviceBuffer<double> out(gpu(), 1);
  const std::size_t n = 54321;
  std::vector<double> x(n), y(n);
  std::mt19937 rng(17);
  for (std::size_t i = 0; i < n; ++i) {
    x[i] = static_cast<double>(rng() % 1000) / 10.0;
    y[i] = static_cast<double>(rng() % 1000) / 10.0;
  }
  auto dx = upload(gpu(), x), dy = upload(gpu(), y);
  dist(stream(), n, out.data(), dx.data(), dy.data());
  synchronize();
  double ref = 0;
  for (std::size_t i = 0; i < n; ++i) ref += (x[i] - y[i]) * (x[i] - y[i]);
  EXPECT_NEAR(download(out.data(), 1)[0], std::sqrt(ref), 1e-9 * std::sqrt(ref));
  // n == 0: post_map(identity).
  SP_CUDA_CHECK(cudaMemset(out.data(), 0xff, sizeof(double)));
  const ReductionLaunch l = dist(stream(), 0, out.data(), dx.data(), dy.data());
  EXPECT_EQ(l.first_pass.grid.x, 0u);
  synchronize();
  EXPECT_EQ(download(out.data(), 1)[0], 0.0);
  // The result pointer's type must match the reduce type.
  DeviceBuffer<float> wrong(gpu(), 1);
  EXPECT_THROW(dist(stream(), n, wrong.data(), dx.data(), dy.data()), JitError);
}

}  // namespace
