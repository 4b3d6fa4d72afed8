// SPDX-License-Identifier: Apache-2.0
// The Mandelbrot kernels against the host, bit for bit at each precision (poisoned output),
// and the image's bands dealt by the engine over the GPU (alone, named twice, or beside the
// CPU) giving the counts of the whole image computed in one kernel.

#include "streampipe/cuda/device_buffer.hpp"
#include "streampipe/tools/mandelbrot/bands.hpp"
#include "streampipe/tools/mandelbrot/compute.hpp"
#include "streampipe/tools/mandelbrot/run.hpp"
#include "support/gpu.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <thread>
#include <utility>
#include <vector>

namespace streampipe::tools::mandelbrot {
namespace {

Params detailed(std::uint32_t w, std::uint32_t h, std::uint32_t iterations = 1000) {
  Params p;
  p.width = w;
  p.height = h;
  p.region = Region::centered(-0.7436, 0.1318, 0.02, w, h);  // a detailed spot
  p.max_iterations = iterations;
  return p;
}

// The whole image in one kernel: the GPU path before the engine dealt bands.
std::vector<std::uint32_t> one_kernel(const Device& gpu, const Params& p, Precision prec) {
  Stream stream(gpu);
  DeviceBuffer<std::uint32_t> d(gpu, p.pixels());
  SP_CUDA_CHECK(cudaMemsetAsync(d.data(), 0xff, d.bytes(), stream.handle()));  // poison
  compute_device(stream.ref(), p, prec, d.data());
  std::vector<std::uint32_t> got(p.pixels());
  SP_CUDA_CHECK(cudaMemcpyAsync(got.data(), d.data(), d.bytes(), cudaMemcpyDeviceToHost, stream.handle()));
  stream.synchronize();
  return got;
}

TEST(MandelbrotGpu, KernelsMatchTheHostBitForBit) {
  SP_REQUIRE_GPU();
  const Device gpu(0);
  for (const auto& [w, h] : {std::pair{1u, 1u}, std::pair{333u, 211u}, std::pair{1024u, 769u}}) {
    for (const Precision prec : {Precision::double_, Precision::single}) {
      const Params p = detailed(w, h);
      const Comparison c = compare(compute_host(p, prec), one_kernel(gpu, p, prec), w, h);
      EXPECT_EQ(c.differing, 0u) << to_string(prec) << " " << w << "x" << h;
    }
  }
}

// The band kernel reads its band from device memory, as the engine hands it the item's input.
TEST(MandelbrotGpu, TheBandKernelReadsItsBandFromTheDevice) {
  SP_REQUIRE_GPU();
  const Device gpu(0);
  Stream stream(gpu);
  const Params p = detailed(333, 211);
  const RowBand band{100, 37};
  DeviceBuffer<RowBand> d_band(gpu, 1);
  SP_CUDA_CHECK(cudaMemcpyAsync(d_band.data(), &band, sizeof band, cudaMemcpyHostToDevice, stream.handle()));
  for (const Precision prec : {Precision::double_, Precision::single}) {
    DeviceBuffer<std::uint32_t> d(gpu, std::size_t{band.rows} * p.width);
    SP_CUDA_CHECK(cudaMemsetAsync(d.data(), 0xff, d.bytes(), stream.handle()));
    compute_device_band(stream.ref(), p, prec, d_band.data(), band.rows, d.data());
    std::vector<std::uint32_t> got(d.size());
    SP_CUDA_CHECK(cudaMemcpyAsync(got.data(), d.data(), d.bytes(), cudaMemcpyDeviceToHost, stream.handle()));
    stream.synchronize();
    EXPECT_EQ(got, compute_host_rows(p, prec, band)) << to_string(prec);
  }
}

// The GPU alone, the same GPU named twice (two members sharing it), and the CPU beside it:
// every set gives the one-kernel counts at each precision.
TEST(MandelbrotGpu, EverySetGivesTheOneKernelCounts) {
  SP_REQUIRE_GPU();
  const Device gpu(0);
  for (const auto& [w, h] : {std::pair{333u, 211u}, std::pair{2u, 2u}, std::pair{1920u, 1080u}}) {
    const Params p = detailed(w, h);
    for (const Precision prec : {Precision::double_, Precision::single}) {
      const auto want = one_kernel(gpu, p, prec);
      for (const auto& [backend, devices] :
           {std::pair{pipeline::Backend::gpu, std::vector<int>{0}},
            std::pair{pipeline::Backend::gpu, std::vector<int>{0, 0}},
            std::pair{pipeline::Backend::automatic, std::vector<int>{0}}}) {
        pipeline::EngineOptions o = tool_engine_defaults();
        o.backend = backend;
        o.devices = devices;
        o.gpu_start_ms = 0;  // the GPU starts however short the run
        o.gpu_stop_ms = 0;
        const BandsRun run = compute_bands(band_operation(p, prec), o, p, {0, h});
        const std::string set = std::string(pipeline::backend_name(backend)) + " with " +
                                std::to_string(devices.size()) + " GPU(s), " + std::string(to_string(prec)) + " " +
                                std::to_string(w) + "x" + std::to_string(h);
        EXPECT_EQ(run.counts, want) << set;
        std::size_t bands = 0;
        for (const auto& d : run.devices) bands += d.bands;
        EXPECT_EQ(bands, run.bands.size()) << set;
        if (backend == pipeline::Backend::gpu) {
          EXPECT_TRUE(run.gpu_ran) << set;
          EXPECT_GT(run.query.compute_ms.value_or(0.0), 0.0) << set;
          EXPECT_GT(run.query.d2h_ms.value_or(0.0), 0.0) << set;
        }
      }
    }
  }
}

// The tool's default set (the CPU and every GPU): the one-kernel counts at each precision,
// wherever the engine put the bands (a short image may end on the CPU alone).
TEST(MandelbrotGpu, TheDefaultSetOfTheRunGivesTheOneKernelCounts) {
  SP_REQUIRE_GPU();
  const Device gpu(0);
  for (const Precision prec : {Precision::double_, Precision::single}) {
    Options o;
    o.params.width = 1920;
    o.params.height = 1080;
    o.params.region = Region::centered(-0.75, 0.0, 3.5, 1920, 1080);
    o.params.max_iterations = 1000;
    o.precision = prec;
    const Summary s = run(o);
    EXPECT_EQ(s.counts, one_kernel(gpu, o.params, prec)) << to_string(prec) << " on " << s.where;
    EXPECT_FALSE(s.double_differs(o));
  }
}

// A CPU far slower than the GPU (its bands held up on purpose): the GPU joins while the CPU
// works and takes bands, the CPU keeps those it took, and the counts are the one-kernel ones.
TEST(MandelbrotGpu, TheGpuJoinsASlowCpuAndTakesBands) {
  SP_REQUIRE_GPU();
  const Device gpu(0);
  const Params p = detailed(333, 211);
  pipeline::Operation op = band_operation(p, Precision::double_);
  op.host = [inner = op.host](const pipeline::Batch& b) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    inner(b);
  };
  pipeline::EngineOptions o = tool_engine_defaults();
  o.devices = {0};
  o.gpu_start_ms = 0;  // the GPU starts as soon as the CPU is measured
  o.gpu_stop_ms = 0;
  const BandsRun run = compute_bands(op, o, p, {0, p.height});
  EXPECT_EQ(run.counts, one_kernel(gpu, p, Precision::double_));
  EXPECT_TRUE(run.gpu_ran);
  std::size_t cpu = 0, gpus = 0;
  for (const auto& d : run.devices) (d.device == pipeline::kCpuDevice ? cpu : gpus) += d.bands;
  EXPECT_GT(gpus, 0u);
  EXPECT_EQ(cpu + gpus, run.bands.size());
  EXPECT_GT(run.query.compute_ms.value_or(0.0), 0.0);
}

}  // namespace
}  // namespace streampipe::tools::mandelbrot
