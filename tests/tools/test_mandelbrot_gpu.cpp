// SPDX-License-Identifier: Apache-2.0
// The Mandelbrot kernels against the host, bit for bit at each precision (poisoned output).

#include "streampipe/cuda/device_buffer.hpp"
#include "streampipe/tools/mandelbrot/compute.hpp"
#include "streampipe/tools/mandelbrot/bands.hpp"
#include "support/gpu.hpp"

#include <gtest/gtest.h>

#include <utility>
#include <vector>

namespace streampipe::tools::mandelbrot {
namespace {

TEST(MandelbrotGpu, KernelsMatchTheHostBitForBit) {
  SP_REQUIRE_GPU();
  const Device gpu(0);
  Stream stream(gpu);
  for (const auto& [w, h] : {std::pair{1u, 1u}, std::pair{333u, 211u}, std::pair{1024u, 769u}}) {
    for (const Precision prec : {Precision::double_, Precision::single}) {
      Params p;
      p.width = w;
      p.height = h;
      p.region = Region::centered(-0.7436, 0.1318, 0.02, w, h);  // a detailed spot
      p.max_iterations = 1000;
      DeviceBuffer<std::uint32_t> d(gpu, p.pixels());
      SP_CUDA_CHECK(cudaMemsetAsync(d.data(), 0xff, d.bytes(), stream.handle()));  // poison
      compute_device(stream.ref(), p, prec, d.data());
      std::vector<std::uint32_t> got(p.pixels());
      SP_CUDA_CHECK(cudaMemcpyAsync(got.data(), d.data(), d.bytes(), cudaMemcpyDeviceToHost, stream.handle()));
      stream.synchronize();
      const auto want = compute_host(p, prec);
      const Comparison c = compare(want, got, w, h);
      EXPECT_EQ(c.differing, 0u) << to_string(prec) << " " << w << "x" << h;
    }
  }
}

// The multi-GPU path on one GPU: the same device twice (and three times, with an empty
// band) must work and give the whole image's counts exactly.
TEST(MandelbrotGpu, BandsOnTheSameGpuEqualTheWholeImage) {
  SP_REQUIRE_GPU();
  const Device gpu(0);
  for (const auto& [w, h] : {std::pair{333u, 211u}, std::pair{2u, 2u}, std::pair{1920u, 1080u}}) {
    Params p;
    p.width = w;
    p.height = h;
    p.region = Region::centered(-0.7436, 0.1318, 0.02, w, h);
    p.max_iterations = 1000;
    const auto want = compute_host(p, Precision::double_);
    for (const std::vector<Device>& devices :
         {std::vector<Device>{gpu}, std::vector<Device>{gpu, gpu}, std::vector<Device>{gpu, gpu, gpu}}) {
      const SpreadRun run = compute_spread(devices, p, Precision::double_);
      EXPECT_EQ(compare(want, run.counts, w, h).differing, 0u) << devices.size() << " bands of " << w << "x" << h;
      EXPECT_EQ(run.counts, want);
      ASSERT_EQ(run.bands.size(), devices.size());
      for (const auto& b : run.bands) {
        EXPECT_EQ(b.device, 0);
        if (b.band.rows > 0) {
          EXPECT_GT(b.compute_ms, 0.0);
        }
      }
      EXPECT_GT(run.compute_ms, 0.0);
      EXPECT_LE(run.enqueue_begin_ms, run.enqueue_end_ms);
      EXPECT_LE(run.enqueue_end_ms, run.complete_ms);
    }
  }
}

}  // namespace
}  // namespace streampipe::tools::mandelbrot
