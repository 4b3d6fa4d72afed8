// SPDX-License-Identifier: Apache-2.0
// nvJPEG's luma-only output (NVJPEG_OUTPUT_Y, GpuJpegOutput::luma) against libjpeg-turbo's
// luma-only decode, on JPEGs of every coding nvJPEG is given (written here with
// libjpeg-turbo), one by one and batched on the JPEG engines: rows packed, nothing written
// past the image, the gray values within the documented tolerance (docs/gray.md); and whole
// --decode gpu runs against --decode cpu with luma-only decoding: each file's path and
// decoder, outputs within the tolerance, the files nvJPEG is not given exactly the CPU's.

#include "io/jpeg_recipes.hpp"
#include "support/gpu.hpp"
#include "test_gray_files.hpp"

#include "streampipe/cuda/device_buffer.hpp"
#include "streampipe/cuda/error.hpp"
#include "streampipe/cuda/stream.hpp"
#include "streampipe/io/gpu_jpeg_batch.hpp"
#include "streampipe/io/gpu_jpeg_decoder.hpp"
#include "streampipe/tools/gray/convert.hpp"
#include "streampipe/tools/gray/decode.hpp"

#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <iostream>
#include <memory>

namespace streampipe::tools::gray {
namespace {
using namespace testing;

constexpr std::uint8_t kPoison = 0xA5;
constexpr std::size_t kGuard = 256;  // bytes after the image that must stay poisoned

struct Sample {
  std::string name;
  std::vector<std::byte> jpeg;
  bool baseline = false;
};

// The recipes nvJPEG is given (gpu_decode_refusal accepts them) at odd sizes.
std::vector<Sample> gpu_samples() {
  std::vector<Sample> samples;
  const std::pair<std::uint32_t, std::uint32_t> sizes[] = {{17, 9}, {333, 211}, {1, 1}, {640, 479}};
  unsigned seed = 1;
  for (const auto& recipe : io::testing::every_jpeg_recipe()) {
    for (const auto& [w, h] : sizes) {
      Sample s;
      s.name = recipe.name + " " + std::to_string(w) + "x" + std::to_string(h);
      s.jpeg = io::testing::write_jpeg_recipe(io::testing::in_gamut_photo(w, h, seed++), recipe);
      if (gpu_decode_refusal(s.jpeg)) continue;
      s.baseline = !recipe.progressive;
      samples.push_back(std::move(s));
    }
  }
  return samples;
}

std::vector<std::uint8_t> cpu_luma(std::span<const std::byte> jpeg) {
  io::ImageReadOptions o;
  o.jpeg_luma = true;
  const io::Image image = io::decode_image(jpeg, o);
  EXPECT_EQ(image.channels, 1);
  return image.pixels;
}

// The poisoned device buffer's first `bytes` as decoded; fails when the guard after them changed.
std::vector<std::uint8_t> fetch(const DeviceBuffer<std::uint8_t>& d, std::size_t bytes, const Stream& stream,
                                const std::string& name) {
  std::vector<std::uint8_t> host(bytes + kGuard);
  SP_CUDA_CHECK(cudaMemcpyAsync(host.data(), d.data(), host.size(), cudaMemcpyDeviceToHost, stream.handle()));
  stream.synchronize();
  for (std::size_t i = bytes; i < host.size(); ++i)
    if (host[i] != kPoison) {
      ADD_FAILURE() << name << ": byte " << i - bytes << " past the image was written";
      break;
    }
  host.resize(bytes);
  return host;
}

DeviceBuffer<std::uint8_t> poisoned(const Device& device, std::size_t bytes, const Stream& stream) {
  DeviceBuffer<std::uint8_t> d(device, bytes + kGuard);
  SP_CUDA_CHECK(cudaMemsetAsync(d.data(), kPoison, bytes + kGuard, stream.handle()));
  return d;
}

TEST(GpuJpegLuma, OneByOneMatchesLibjpegTurbosLuma) {
  SP_REQUIRE_GPU();
  const Device device(0);
  const io::GpuJpegDecoder decoder(device);
  const Stream stream(device);  // outlives the state, which frees in its order
  io::GpuJpegState state(decoder);
  LevelDifference all;
  for (const Sample& s : gpu_samples()) {
    const io::GpuJpegInfo info = decoder.info(s.jpeg);
    ASSERT_TRUE(info.supported) << s.name << ": " << info.sampling;
    const std::size_t bytes = std::size_t{info.width} * info.height;
    auto d = poisoned(device, bytes, stream);
    state.decode(s.jpeg, info, io::GpuJpegOutput::luma, {d.data(), bytes}, stream.ref());
    LevelDifference diff;
    diff.add(fetch(d, bytes, stream, s.name), cpu_luma(s.jpeg));
    std::cout << s.name << " (" << info.sampling << "): max " << diff.max << " mean " << diff.mean() << "\n";
    // Within a level in every file (the IDCTs round apart); how many pixels differ is judged
    // over all files, not per file: six pixels of a 17x9 image are already a mean of 0.04.
    EXPECT_LE(diff.max, 1) << s.name << ": max " << diff.max << " mean " << diff.mean();
    all.add(diff);
  }
  std::cout << "nvJPEG's luma vs libjpeg-turbo's over " << all.count << " pixels: max " << all.max << " mean "
            << all.mean() << "\n";
  EXPECT_GT(all.count, 0u);
  EXPECT_TRUE(all.within_tolerance()) << "max " << all.max << " mean " << all.mean();
}

// Decodes `batch` on `state` to `output` and checks each image against libjpeg-turbo's luma
// (the luma of the RGB output): no byte written past an image, each within the tolerance.
LevelDifference decode_batch_and_check(io::GpuJpegBatchState& state, const io::GpuJpegDecoder& general,
                                       const Device& device, const Stream& stream, std::span<const Sample> batch,
                                       io::GpuJpegOutput output) {
  std::vector<DeviceBuffer<std::uint8_t>> buffers;
  std::vector<io::GpuJpegTarget> targets;
  for (const Sample& s : batch) {
    const io::GpuJpegInfo info = general.info(s.jpeg);
    buffers.push_back(poisoned(device, std::size_t{info.width} * info.height * io::bytes_per_pixel(output), stream));
    targets.push_back({s.jpeg, info, buffers.back().data()});
  }
  state.decode(targets, output, stream.ref());
  LevelDifference all;
  for (std::size_t i = 0; i < batch.size(); ++i) {
    const std::size_t pixels = std::size_t{targets[i].info.width} * targets[i].info.height;
    auto got = fetch(buffers[i], pixels * io::bytes_per_pixel(output), stream, batch[i].name);
    if (output == io::GpuJpegOutput::rgb) {
      std::vector<std::uint8_t> y(pixels);
      ops::rgb_to_gray_host(got, y);
      got = std::move(y);
    }
    LevelDifference diff;
    diff.add(got, cpu_luma(batch[i].jpeg));
    EXPECT_TRUE(diff.within_tolerance()) << batch[i].name << ": max " << diff.max << " mean " << diff.mean();
    all.add(diff);
  }
  return all;
}

// The hardware backend and the baseline samples it takes, or a skip reason.
struct Engines {
  std::unique_ptr<io::GpuJpegDecoder> decoder;
  std::vector<Sample> baseline;
  std::string missing;
};

Engines jpeg_engines(const Device& device, const io::GpuJpegDecoder& general) {
  Engines e;
  try {
    e.decoder = std::make_unique<io::GpuJpegDecoder>(device, io::GpuJpegBackend::hardware);
  } catch (const io::NvjpegError& error) {
    e.missing = std::string("no JPEG engines on this GPU: ") + error.what();
    return e;
  }
  if (e.decoder->hardware_engines() == 0) e.missing = "no JPEG engines on this GPU";
  for (auto& s : gpu_samples())
    if (s.baseline && general.info(s.jpeg).engine_sampling) e.baseline.push_back(std::move(s));
  return e;
}

TEST(GpuJpegLuma, TheJpegEnginesDecodeLumaInBatches) {
  SP_REQUIRE_GPU();
  const Device device(0);
  const io::GpuJpegDecoder general(device);
  Engines engines = jpeg_engines(device, general);
  if (!engines.missing.empty()) GTEST_SKIP() << engines.missing;
  const Stream stream(device);
  io::GpuJpegBatchState state(*engines.decoder);
  const std::vector<Sample>& batch = engines.baseline;
  ASSERT_GE(batch.size(), 8u);
  // RGB, then luma, then RGB again on one state: a change of output sets the state up again.
  for (const auto output : {io::GpuJpegOutput::rgb, io::GpuJpegOutput::luma, io::GpuJpegOutput::rgb}) {
    const LevelDifference all = decode_batch_and_check(state, general, device, stream, batch, output);
    std::cout << "JPEG engines, " << batch.size() << " files to " << (output == io::GpuJpegOutput::rgb ? "RGB" : "luma")
              << ": max " << all.max << " mean " << all.mean() << " levels from libjpeg-turbo's luma\n";
  }
}

// The state's buffers are allocated for the largest image so far: batches of small images,
// then larger ones (the buffers grow), then fewer images (the state is set up again and keeps
// the largest size), then the whole set, all decoded right on one state.
TEST(GpuJpegLuma, TheJpegEnginesTakeBatchesOfChangingSizes) {
  SP_REQUIRE_GPU();
  const Device device(0);
  const io::GpuJpegDecoder general(device);
  Engines engines = jpeg_engines(device, general);
  if (!engines.missing.empty()) GTEST_SKIP() << engines.missing;
  std::vector<Sample> by_size = std::move(engines.baseline);
  ASSERT_GE(by_size.size(), 8u);
  const auto pixels = [&](const Sample& s) {
    const io::GpuJpegInfo i = general.info(s.jpeg);
    return std::size_t{i.width} * i.height;
  };
  std::stable_sort(by_size.begin(), by_size.end(),
                   [&](const Sample& a, const Sample& b) { return pixels(a) < pixels(b); });
  const Stream stream(device);
  io::GpuJpegBatchState state(*engines.decoder);
  const std::size_t half = by_size.size() / 2;
  const std::span<const Sample> all(by_size);
  const std::span<const Sample> batches[] = {all.first(half), all.last(half), all.first(3), all.last(3), all};
  for (const auto& batch : batches) {
    const LevelDifference diff = decode_batch_and_check(state, general, device, stream, batch, io::GpuJpegOutput::luma);
    EXPECT_EQ(diff.count, [&] {
      std::size_t n = 0;
      for (const Sample& s : batch) n += pixels(s);
      return n;
    }());
  }
}

TEST(GrayGpuDecode, LumaRunsMatchTheCpuLumaPath) {
  SP_REQUIRE_GPU();
  TempDir d;
  std::vector<fs::path> files;
  std::vector<bool> for_nvjpeg;
  unsigned seed = 100;
  for (const auto& recipe : io::testing::every_jpeg_recipe()) {
    const auto jpeg = io::testing::write_jpeg_recipe(io::testing::in_gamut_photo(301, 199, seed++), recipe);
    files.push_back(d / ("in/" + recipe.name + ".jpg"));
    write_bytes(files.back(), jpeg.data(), jpeg.size());
    for_nvjpeg.push_back(!gpu_decode_refusal(jpeg));
  }
  files.push_back(d / "in/picture.png");
  write_png(files.back(), random_image(123, 45, 3, 8, 6));
  for_nvjpeg.push_back(false);

  Options o;
  o.engine.backend = pipeline::Backend::gpu;
  o.engine.devices = {0};
  o.engine.host_threads = 2;
  o.engine.lanes = 2;
  o.group = 4;
  o.decode = Decode::cpu;
  const auto cpu_jobs = jobs_for(files, d / "out-cpu");
  const RunSummary cpu = convert(cpu_jobs, o);
  o.decode = Decode::gpu;
  const auto gpu_jobs = jobs_for(files, d / "out-gpu");
  const RunSummary gpu = convert(gpu_jobs, o);
  ASSERT_EQ(cpu.ok, files.size());
  ASSERT_EQ(gpu.ok, files.size());
  EXPECT_EQ(gpu.decoded_to, cpu.decoded_to) << "the same files decoded to luma either way";

  LevelDifference diff;
  for (std::size_t i = 0; i < files.size(); ++i) {
    SCOPED_TRACE(files[i].filename().string());
    const FileResult& c = cpu.files[i];
    const FileResult& g = gpu.files[i];
    EXPECT_EQ(g.decoded_to, c.decoded_to);
    EXPECT_EQ(g.decoder, for_nvjpeg[i] ? "gpu" : "cpu") << g.fallback;
    const io::Image want = io::read_image(cpu_jobs[i].output);
    const io::Image got = io::read_image(gpu_jobs[i].output);
    ASSERT_EQ(got.pixels.size(), want.pixels.size());
    if (g.decoder == "gpu") {
      EXPECT_EQ(g.decoded_to, "luma");
      diff.add(got.pixels, want.pixels);
    } else {
      EXPECT_EQ(got.pixels, want.pixels) << "decoded on the host either way";
    }
  }
  std::cout << "--decode gpu (luma) against --decode cpu (luma) over " << diff.count << " pixels: max " << diff.max
            << " mean " << diff.mean() << " levels\n";
  EXPECT_GT(diff.count, 0u);
  EXPECT_TRUE(diff.within_tolerance()) << "max " << diff.max << " mean " << diff.mean();

  // Without luma-only decoding nvJPEG decodes to RGB and the kernel takes its luma.
  o.jpeg_luma = false;
  const auto rgb_jobs = jobs_for(files, d / "out-gpu-rgb");
  const RunSummary rgb = convert(rgb_jobs, o);
  ASSERT_EQ(rgb.ok, files.size());
  for (std::size_t i = 0; i < files.size(); ++i) {
    if (rgb.files[i].decoder == "gpu") {
      EXPECT_EQ(rgb.files[i].decoded_to, "rgb") << files[i];
    }
  }
}

}  // namespace
}  // namespace streampipe::tools::gray
