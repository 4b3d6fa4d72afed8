// SPDX-License-Identifier: Apache-2.0
// The Mandelbrot kernels against the host, bit for bit at each precision (poisoned output).

#include "streampipe/cuda/device_buffer.hpp"
#include "streampipe/tools/mandelbrot.hpp"
#include "support/gpu.hpp"

#include <gtest/gtest.h>

#include <utility>

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

}  // namespace
}  // namespace streampipe::tools::mandelbrot
