// SPDX-License-Identifier: Apache-2.0
// --decode gpu (built with nvJPEG): nvJPEG's RGB against libjpeg-turbo's on photo-like JPEGs
// of odd sizes (max and mean gray difference printed, held to the documented tolerance), and
// whole runs against --decode cpu: same files ok, PNGs identical, JPEGs within the
// tolerance, bad files failing with the same message, fallbacks counted by reason.

#include "io/jpeg_variants.hpp"
#include "support/gpu.hpp"
#include "test_gray_files.hpp"

#include "streampipe/cuda/device_buffer.hpp"
#include "streampipe/cuda/error.hpp"
#include "streampipe/cuda/stream.hpp"
#include "streampipe/io/gpu_jpeg_decoder.hpp"
#include "streampipe/tools/gray/convert.hpp"
#include "streampipe/tools/gray/decode.hpp"
#include "streampipe/tools/gray/synthetic.hpp"

#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <iostream>
#include <map>

namespace streampipe::tools::gray {
namespace {
using namespace testing;

using Difference = LevelDifference;  // held to the documented tolerance (docs/gray.md)
constexpr int kMaxLevels = LevelDifference::kMaxLevels;
constexpr double kMeanLevels = LevelDifference::kMeanLevels;

std::vector<std::uint8_t> luma(std::span<const std::uint8_t> rgb) {
  std::vector<std::uint8_t> gray(rgb.size() / 3);
  ops::rgb_to_gray_host(rgb, gray);
  return gray;
}

std::vector<std::uint8_t> cpu_rgb(std::span<const std::byte> jpeg) {
  const io::Image image = io::decode_image(jpeg);
  std::vector<std::uint8_t> rgb(rgb8_bytes(image));
  to_rgb8(image, rgb);
  return rgb;
}

TEST(GpuJpegDecoder, RgbMatchesLibjpegTurboWithinTolerance) {
  SP_REQUIRE_GPU();
  const Device device(0);
  const io::GpuJpegDecoder decoder(device);
  const Stream stream(device);  // outlives the state, which frees in its order
  io::GpuJpegState state(decoder);
  struct Case {
    std::uint32_t w, h;
    int quality;
    bool gray;
  };
  const Case cases[] = {{333, 217, 90, false}, {640, 479, 75, false}, {1921, 1079, 90, false},
                        {257, 131, 90, true},  {17, 9, 95, false}};
  Difference gray_all, rgb_all;
  for (const auto& c : cases) {
    io::Image img = photo_like(c.w, c.h, c.w * 7 + c.h);
    if (c.gray) {
      io::Image g = io::Image::make(c.w, c.h, 1, 8);
      ops::rgb_to_gray_host(img.pixels, g.pixels);
      img = std::move(g);
    }
    const auto jpeg = io::encode_jpeg(img, c.quality);
    const io::GpuJpegInfo info = decoder.info(jpeg);
    ASSERT_TRUE(info.supported) << info.components << " " << info.sampling;
    EXPECT_EQ(info.width, c.w);
    EXPECT_EQ(info.height, c.h);
    EXPECT_EQ(info.components, c.gray ? 1 : 3);
    if (c.gray) {
      EXPECT_EQ(info.sampling, "gray");
    }

    const std::size_t bytes = std::size_t{c.w} * c.h * 3;
    DeviceBuffer<std::uint8_t> d_rgb(device, bytes);
    SP_CUDA_CHECK(cudaMemsetAsync(d_rgb.data(), 0xA5, bytes, stream.handle()));  // poison
    state.decode(jpeg, info, io::GpuJpegOutput::rgb, d_rgb.span(), stream.ref());
    std::vector<std::uint8_t> got(bytes);
    SP_CUDA_CHECK(cudaMemcpyAsync(got.data(), d_rgb.data(), bytes, cudaMemcpyDeviceToHost, stream.handle()));
    stream.synchronize();

    const auto want = cpu_rgb(jpeg);
    Difference g, rgb;
    g.add(luma(got), luma(want));
    rgb.add(got, want);
    std::cout << c.w << "x" << c.h << (c.gray ? " gray" : " colour") << " q" << c.quality
              << ": gray max " << g.max << " mean " << g.mean() << ", RGB max " << rgb.max << " mean "
              << rgb.mean() << " levels against libjpeg-turbo\n";
    gray_all.add(luma(got), luma(want));
    rgb_all.add(got, want);
  }
  ::testing::Test::RecordProperty("gray_max_levels", gray_all.max);
  ::testing::Test::RecordProperty("gray_mean_levels", std::to_string(gray_all.mean()));
  std::cout << "all: gray max " << gray_all.max << " mean " << gray_all.mean() << ", RGB max " << rgb_all.max
            << " mean " << rgb_all.mean() << "\n";
  EXPECT_LE(gray_all.max, kMaxLevels);
  EXPECT_LE(gray_all.mean(), kMeanLevels);
}

TEST(GpuJpegDecoder, RefusesBadInputWithTheStatusName) {
  SP_REQUIRE_GPU();
  const io::GpuJpegDecoder decoder(Device(0));
  const std::vector<std::byte> junk(100, std::byte{0x42});
  try {
    (void)decoder.info(junk);
    ADD_FAILURE() << "nvjpegGetImageInfo accepted 100 bytes of junk";
  } catch (const io::NvjpegError& e) {
    EXPECT_NE(e.status(), 0);
    EXPECT_NE(std::string(e.what()).find("NVJPEG_STATUS_"), std::string::npos) << e.what();
  }
}

TEST(GrayGpuDecode, RunMatchesTheCpuDecodePath) {
  SP_REQUIRE_GPU();
  TempDir d;
  std::vector<fs::path> files;
  // Colour photos of odd sizes, small and large mixed so the lanes' buffers grow mid-run.
  const std::pair<std::uint32_t, std::uint32_t> sizes[] = {{101, 67},  {1283, 719}, {333, 217}, {1921, 1081},
                                                           {64, 48},   {999, 1001}, {17, 9},    {640, 479},
                                                           {1280, 721}, {77, 1200}};
  std::uint32_t seed = 1;
  for (const auto& [w, h] : sizes) {
    files.push_back(d / ("in/photo-" + std::to_string(seed) + ".jpg"));
    write_jpeg(files.back(), photo_like(w, h, seed++), 90);
  }
  files.push_back(d / "in/gray.jpg");
  write_jpeg(files.back(), random_image(211, 97, 1, 8, 5), 85);
  files.push_back(d / "in/picture.png");
  write_png(files.back(), random_image(123, 45, 3, 8, 6));
  files.push_back(d / "in/truncated.jpg");
  {
    const auto cut = io::testing::truncated(io::encode_jpeg(photo_like(300, 200, 7), 90));
    write_bytes(files.back(), cut.data(), cut.size());
  }
  files.push_back(d / "in/junk.jpg");
  {
    std::vector<std::byte> junk = {std::byte{0xFF}, std::byte{0xD8}, std::byte{0xFF}};
    junk.resize(500, std::byte{0x37});
    write_bytes(files.back(), junk.data(), junk.size());
  }

  Options o;
  o.engine.backend = pipeline::Backend::gpu;
  o.engine.devices = {0};
  o.engine.host_threads = 4;
  o.engine.lanes = 3;
  o.decode = Decode::cpu;
  const auto cpu_jobs = jobs_for(files, d / "out-cpu");
  const RunSummary cpu = convert(cpu_jobs, o);
  o.decode = Decode::gpu;
  const auto gpu_jobs = jobs_for(files, d / "out-gpu");
  const RunSummary gpu = convert(gpu_jobs, o);

  EXPECT_EQ(gpu.decode, "gpu");
  EXPECT_EQ(cpu.decode, "cpu");
  EXPECT_EQ(cpu.gpu_decoded, 0u);
  EXPECT_EQ(gpu.ok, cpu.ok);
  EXPECT_EQ(gpu.ok, files.size() - 2);
  EXPECT_EQ(gpu.failed, 2u);
  EXPECT_EQ(gpu.gpu_decoded, std::size(sizes) + 1);
  EXPECT_EQ(gpu.fallbacks.at("PNG file"), 1u);
  EXPECT_EQ(gpu.fallbacks.at("incomplete JPEG (no end-of-image marker)"), 1u);
  EXPECT_EQ(gpu.fallbacks.at("unreadable JPEG markers"), 1u);

  Difference diff;
  for (std::size_t i = 0; i < files.size(); ++i) {
    const FileResult& c = cpu.files[i];
    const FileResult& g = gpu.files[i];
    ASSERT_EQ(c.ok, g.ok) << files[i] << ": " << c.error << " / " << g.error;
    if (!c.ok) {
      // The same message, naming the file, as the CPU path gives.
      EXPECT_EQ(g.error, c.error);
      EXPECT_FALSE(fs::exists(gpu_jobs[i].output));
      continue;
    }
    EXPECT_EQ(g.width, c.width);
    EXPECT_EQ(g.height, c.height);
    EXPECT_EQ(g.channels, c.channels);
    const io::Image want = io::read_image(cpu_jobs[i].output);
    const io::Image got = io::read_image(gpu_jobs[i].output);
    ASSERT_EQ(got.pixels.size(), want.pixels.size()) << files[i];
    if (files[i].extension() == ".png") {
      EXPECT_EQ(g.decoder, "cpu");
      EXPECT_EQ(got.pixels, want.pixels) << files[i];
    } else {
      EXPECT_EQ(g.decoder, "gpu") << files[i] << ": " << g.fallback;
      EXPECT_TRUE(g.fallback.empty()) << g.fallback;
      diff.add(got.pixels, want.pixels);
    }
  }
  std::cout << "--decode gpu against --decode cpu over " << diff.count << " pixels: max " << diff.max << " mean "
            << diff.mean() << " levels\n";
  EXPECT_LE(diff.max, kMaxLevels);
  EXPECT_LE(diff.mean(), kMeanLevels);
  EXPECT_GT(diff.count, 0u);
}

}  // namespace
}  // namespace streampipe::tools::gray

namespace streampipe::tools::gray {
namespace {

double psnr(std::span<const std::uint8_t> a, std::span<const std::uint8_t> b) {
  double sum = 0;
  for (std::size_t i = 0; i < a.size(); ++i) sum += (double(a[i]) - double(b[i])) * (double(a[i]) - double(b[i]));
  const double mse = sum / static_cast<double>(a.size());
  return mse == 0 ? 99.0 : 10.0 * std::log10(255.0 * 255.0 / mse);
}

// JPEG outputs encoded by nvJPEG on the lanes: valid one-component JPEGs of the right size,
// close to the exact gray image (the PNG output of the same run's decode).
TEST(GrayGpuDecode, GpuEncodedJpegsHoldTheGrayImage) {
  SP_REQUIRE_GPU();
  TempDir d;
  std::vector<fs::path> files;
  const std::pair<std::uint32_t, std::uint32_t> sizes[] = {{1920, 1080}, {641, 479}, {17, 9},   {1281, 721},
                                                           {333, 217},   {1920, 1080}, {99, 1001}};
  std::uint32_t seed = 40;
  for (const auto& [w, h] : sizes) {
    files.push_back(d / ("in/photo-" + std::to_string(seed) + ".jpg"));
    write_jpeg(files.back(), photo_like(w, h, seed++), 90);
  }
  files.push_back(d / "in/picture.png");  // decoded on the host, encoded on the GPU
  write_png(files.back(), random_image(123, 45, 3, 8, 6));
  Options o;
  o.engine.backend = pipeline::Backend::gpu;
  o.engine.devices = {0};
  o.engine.host_threads = 2;
  o.engine.lanes = 2;
  o.decode = Decode::gpu;  // the defaults decode and encode on the CPU (docs/gray.md)
  o.encode = Encode::gpu;  // PNG outputs too: the same files as the host's (test_gray_gpu_png.cpp)
  o.group = 3;  // groups of files on the JPEG engines, the last one short
  const auto png_jobs = jobs_for(files, d / "out-png");
  const RunSummary exact = convert(png_jobs, o);
  ASSERT_EQ(exact.ok, files.size());
  EXPECT_EQ(exact.encode, "gpu");
  EXPECT_EQ(exact.encoder, "GPU PNG encoder");
  EXPECT_EQ(exact.group, 3u);
  o.format = io::ImageFormat::jpeg;
  const auto jpeg_jobs = jobs_for(files, d / "out-jpeg", io::ImageFormat::jpeg);
  const RunSummary s = convert(jpeg_jobs, o);
  ASSERT_EQ(s.ok, files.size());
  EXPECT_EQ(s.encode, "gpu");
  EXPECT_EQ(s.encoder, "nvJPEG");
  EXPECT_EQ(s.decode, "gpu");
  for (std::size_t i = 0; i < files.size(); ++i) {
    const io::Image want = io::read_image(png_jobs[i].output);
    const io::Image got = io::read_image(jpeg_jobs[i].output);
    EXPECT_EQ(got.channels, 1) << files[i];
    ASSERT_EQ(got.width, want.width) << files[i];
    ASSERT_EQ(got.height, want.height) << files[i];
    const double db = psnr(got.pixels, want.pixels);
    std::cout << files[i].filename().string() << ": nvJPEG q90 gray output at " << db << " dB\n";
    EXPECT_GE(db, 35.0) << files[i];
  }
}

// The defaults put both codecs on the GPU where one may take files: the JPEGs go in groups
// for nvJPEG, the files the GPU converted were decoded by nvJPEG and their gray PNGs encoded
// there, within the tolerance of the CPU decode's luma; the CPU's own files are exact. One
// host worker, 1080p files (seconds of work for the CPU alone, longer than a GPU's start)
// and a start said to cost nothing, so that the GPU starts and joins while the CPU still has
// files.
TEST(GrayGpuDecode, TheDefaultsPutTheCodecsOnTheGpu) {
  SP_REQUIRE_GPU();
  TempDir d;
  std::vector<fs::path> files;
  constexpr std::uint32_t kDistinct = 24;
  for (std::uint32_t i = 0; i < 360; ++i) {
    files.push_back(d / ("in/photo-" + std::to_string(i) + ".jpg"));
    if (i < kDistinct) write_jpeg(files.back(), photo_like(1920, 1080, 100 + i), 90);
    else fs::copy_file(files[i % kDistinct], files.back());
  }
  Options o;
  o.engine.devices = {0};
  o.engine.host_threads = 1;
  o.engine.gpu_start_ms = 1;
  const auto jobs = jobs_for(files, d / "out");
  const RunSummary s = convert(jobs, o);
  ASSERT_EQ(s.ok, files.size());
  EXPECT_GT(s.group, 1u);  // grouped for the JPEG engines: the codecs went to the GPU
  ASSERT_EQ(s.devices.size(), 2u);
  for (const DeviceShare& m : s.devices)
    std::cout << m.device.name << ": " << pipeline::device_state_name(m.device.state) << " " << m.device.reason
              << ", joined at " << m.device.joined_ms << " ms, start " << m.device.start_ms << " ms, " << m.files
              << " files; run " << s.wall_ms << " ms\n";
  EXPECT_EQ(s.devices[1].device.state, pipeline::DeviceReport::State::ready) << s.devices[1].device.reason;
  Difference diff;
  std::size_t on_gpu = 0;
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    const FileResult& f = s.files[i];
    if (f.device == 0) {
      ++on_gpu;
      EXPECT_EQ(f.decoder, "gpu") << i << ": " << f.fallback;
      const io::Image want = expected_gray(jobs[i].input);
      const io::Image got = io::read_image(jobs[i].output);
      ASSERT_EQ(got.pixels.size(), want.pixels.size()) << i;
      diff.add(got.pixels, want.pixels);
    } else {
      EXPECT_EQ(f.device, pipeline::kCpuDevice) << i;
      EXPECT_EQ(f.decoder, "cpu") << i;
      expect_exact(jobs[i].input, jobs[i].output);
    }
  }
  std::cout << "the defaults: " << on_gpu << " of " << files.size() << " files on the GPU, max " << diff.max
            << " mean " << diff.mean() << " levels from the CPU decode's luma\n";
  EXPECT_GT(on_gpu, 0u);
  EXPECT_EQ(s.gpu_decoded, on_gpu);
  EXPECT_EQ(s.encode, on_gpu == 0 ? "cpu" : on_gpu == files.size() ? "gpu" : "cpu+gpu");
  EXPECT_LE(diff.max, kMaxLevels);
  EXPECT_LE(diff.mean(), kMeanLevels);
}

}  // namespace
}  // namespace streampipe::tools::gray
