// SPDX-License-Identifier: Apache-2.0
// GpuPngEncoder against the host encoder: every file byte for byte what encode_png writes at
// level 1 (filter up, strategy fast), and read back by libpng (which checks every CRC and the
// Adler-32) to the same pixels. Images of every awkward shape, flat, noisy, photographic, in
// batches of mixed sizes and in pitched device memory.

#include "image_samples.hpp"
#include "jpeg_recipes.hpp"
#include "support/gpu.hpp"

#include "streampipe/cuda/device_buffer.hpp"
#include "streampipe/cuda/stream.hpp"
#include "streampipe/io/gpu_png_encoder.hpp"
#include "streampipe/io/image.hpp"
#include "streampipe/ops/rgb_to_gray.hpp"

#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <iostream>
#include <optional>
#include <random>
#include <string>
#include <vector>

namespace streampipe::io {
namespace {

struct Named {
  std::string name;
  Image image;  // 8-bit gray
};

Image gray(std::uint32_t w, std::uint32_t h, std::uint8_t value) {
  Image img = Image::make(w, h, 1, 8);
  std::fill(img.pixels.begin(), img.pixels.end(), value);
  return img;
}

Image photo(std::uint32_t w, std::uint32_t h, unsigned seed) {
  const Image rgb = testing::in_gamut_photo(w, h, seed);
  Image img = Image::make(w, h, 1, 8);
  ops::rgb_to_gray_host(rgb.pixels, img.pixels);
  return img;
}

// Runs longer than a match: flat stretches of 1-2000 pixels in the first row (up leaves it as
// it is) and rows repeated, whose residuals are zeros.
Image long_runs(std::uint32_t w, std::uint32_t h) {
  Image img = Image::make(w, h, 1, 8);
  std::mt19937 rng(23);
  for (std::size_t i = 0; i < img.pixels.size();) {
    const std::size_t run = 1 + rng() % 2000;
    std::fill_n(img.pixels.begin() + static_cast<std::ptrdiff_t>(i), std::min(run, img.pixels.size() - i),
                static_cast<std::uint8_t>(rng()));
    i += run;
  }
  for (std::uint32_t y = 1; y < h; y += 3)
    std::copy_n(img.pixels.begin() + (y - 1) * std::size_t{w}, w, img.pixels.begin() + y * std::size_t{w});
  return img;
}

std::vector<Named> shapes() {
  std::vector<Named> s;
  s.push_back({"1x1", random_image(1, 1, 1, 8, 1)});
  s.push_back({"one row", random_image(1001, 1, 1, 8, 2)});
  s.push_back({"one column", random_image(1, 3000, 1, 8, 3)});
  s.push_back({"odd width", random_image(333, 77, 1, 8, 4)});
  s.push_back({"rows straddling blocks", smooth_image(4099, 300, 1)});
  s.push_back({"exactly one block", gray(65535, 4, 9)});  // 4 * 65536 filtered bytes
  s.push_back({"all zero", gray(1000, 1000, 0)});
  s.push_back({"all 255", gray(999, 701, 255)});
  s.push_back({"noise", random_image(1500, 1000, 1, 8, 5)});
  s.push_back({"gradient", smooth_image(2048, 1536, 1)});
  s.push_back({"long runs", long_runs(5000, 200)});
  s.push_back({"photo", photo(2000, 1500, 6)});
  return s;
}

// The images in device memory, each with rows `pad` bytes longer than the image.
struct DeviceImages {
  std::vector<DeviceBuffer<std::uint8_t>> buffers;
  std::vector<GpuGrayPlane> planes;
};

DeviceImages upload(const std::vector<Named>& images, std::size_t pad, const Device& device) {
  DeviceImages d;
  for (const Named& n : images) {
    const Image& img = n.image;
    const std::size_t pitch = img.width + pad;
    d.buffers.emplace_back(device, pitch * img.height);
    EXPECT_EQ(cudaMemcpy2D(d.buffers.back().data(), pitch, img.pixels.data(), img.width, img.width, img.height,
                           cudaMemcpyHostToDevice),
              cudaSuccess);
    d.planes.push_back({d.buffers.back().data(), img.width, img.height, pitch});
  }
  return d;
}

void expect_host_files(const std::vector<Named>& images, const std::vector<std::vector<std::byte>>& files) {
  ASSERT_EQ(files.size(), images.size());
  for (std::size_t i = 0; i < images.size(); ++i) {
    const Image& img = images[i].image;
    const auto host = encode_png(img, {.compression = 1});
    const auto differ = std::mismatch(files[i].begin(), files[i].end(), host.begin(), host.end());
    EXPECT_TRUE(files[i] == host) << images[i].name << ": " << files[i].size() << " bytes, the host's " << host.size()
                                  << ", first different byte at " << (differ.first - files[i].begin());
    const Image back = decode_image(files[i], {}, images[i].name);
    EXPECT_EQ(back.width, img.width) << images[i].name;
    EXPECT_EQ(back.height, img.height) << images[i].name;
    EXPECT_EQ(back.channels, 1) << images[i].name;
    EXPECT_TRUE(back.pixels == img.pixels) << images[i].name;
  }
}

// An encoder on GPU 0 and a stream for it (the test skips without a GPU).
class GpuPng : public ::testing::Test {
 protected:
  void SetUp() override {
    SP_REQUIRE_GPU();
    device_.emplace(0);
    stream_.emplace(*device_);
    encoder_.emplace(*device_);
  }
  // The files of `images`, uploaded with rows `pad` bytes longer than the image's.
  std::vector<std::vector<std::byte>> encode(const std::vector<Named>& images, std::size_t pad) {
    const DeviceImages d = upload(images, pad, *device_);
    return encoder_->encode(d.planes, stream_->ref());
  }
  std::optional<Device> device_;
  std::optional<Stream> stream_;
  std::optional<GpuPngEncoder> encoder_;
};

TEST_F(GpuPng, EachShapeAloneIsTheHostFile) {
  for (const Named& n : shapes()) {
    const std::vector<Named> one{n};
    expect_host_files(one, encode(one, 0));
  }
}

TEST_F(GpuPng, MixedBatchesInPitchedMemoryAreTheHostFiles) {
  const std::vector<Named> all = shapes();
  // Small to large and back: the scratch grows, then is reused with stale contents.
  for (std::size_t pad : {0u, 3u, 256u}) expect_host_files(all, encode(all, pad));
  const std::vector<Named> few(all.begin(), all.begin() + 4);
  expect_host_files(few, encode(few, 1));
}

TEST_F(GpuPng, ManyPhotosInOneBatch) {
  std::vector<Named> photos;
  for (unsigned k = 0; k < 16; ++k)
    photos.push_back({"photo " + std::to_string(k), photo(1200 + 37 * k, 900 - 13 * k, 100 + k)});
  expect_host_files(photos, encode(photos, 64));
}

// A gray run's groups: 16 photos of 4.5 Mpixel. Prints the best of three batches' times (the
// device's share with the host's plan, and the host's wrapping) for docs/image-io.md.
TEST_F(GpuPng, GroupsOfLargePhotos) {
  std::vector<Named> photos;
  for (unsigned k = 0; k < 16; ++k) photos.push_back({"photo " + std::to_string(k), photo(2592, 1728, 200 + k)});
  const DeviceImages d = upload(photos, 0, *device_);
  double best_encode = 1e30, best_wrap = 1e30;
  std::vector<std::vector<std::byte>> files;
  for (int round = 0; round < 3; ++round) {
    const auto t0 = std::chrono::steady_clock::now();
    const std::vector<PngStream> streams = encoder_->encode_streams(d.planes, stream_->ref());
    const auto t1 = std::chrono::steady_clock::now();
    files.clear();
    for (const PngStream& s : streams) files.push_back(png_file(s));
    const auto t2 = std::chrono::steady_clock::now();
    best_encode = std::min(best_encode, std::chrono::duration<double, std::milli>(t1 - t0).count());
    best_wrap = std::min(best_wrap, std::chrono::duration<double, std::milli>(t2 - t1).count());
  }
  std::cout << "16 photos of 2592x1728: encode_streams " << best_encode / 16 << " ms an image (" << 16e3 / best_encode
            << " images/s), png_file " << best_wrap / 16 << " ms an image\n";
  expect_host_files(photos, files);
}

TEST_F(GpuPng, WrongArgumentsAreRefused) {
  DeviceBuffer<std::uint8_t> pixels(*device_, 64);
  EXPECT_TRUE(encoder_->encode({}, stream_->ref()).empty());
  const std::vector<std::vector<GpuGrayPlane>> wrong{
      {{nullptr, 4, 4, 4}},                    // no pixels
      {{pixels.data(), 0, 4, 4}},              // no width
      {{pixels.data(), 4, 0, 4}},              // no height
      {{pixels.data(), 8, 4, 4}},              // pitch below the width
      {{pixels.data(), 65535, 40000, 65535}},  // 2^31 filtered bytes and more
  };
  for (const auto& batch : wrong)
    EXPECT_THROW((void)encoder_->encode(batch, stream_->ref()), std::invalid_argument);
}

}  // namespace
}  // namespace streampipe::io
