// SPDX-License-Identifier: Apache-2.0
#pragma once
// Test inputs for the gray tool, generated at test time: images of every layout the tool
// accepts (odd sizes, random pixels), written as PNG or JPEG into a temporary folder, and
// the reference result of a file (decoded - a YCbCr JPEG to its luma alone -, the luma of
// what is colour taken on the host).

#include "streampipe/io/image.hpp"
#include "streampipe/ops/rgb_to_gray.hpp"
#include "streampipe/tools/gray/convert.hpp"
#include "streampipe/tools/gray/plan.hpp"
#include "streampipe/tools/gray/pixels.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <functional>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <unistd.h>
#include <vector>

namespace streampipe::tools::gray::testing {
namespace fs = std::filesystem;

class TempDir {
 public:
  TempDir() {
    static std::atomic<int> counter{0};
    path_ = fs::temp_directory_path() /
            ("streampipe-gray-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
    fs::remove_all(path_);
    fs::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  [[nodiscard]] const fs::path& path() const noexcept { return path_; }
  [[nodiscard]] fs::path operator/(const std::string& name) const { return path_ / name; }

 private:
  fs::path path_;
};

inline io::Image random_image(std::uint32_t w, std::uint32_t h, int channels, int depth, unsigned seed) {
  io::Image img = io::Image::make(w, h, channels, depth);
  std::mt19937 rng(seed);
  if (depth == 8) {
    for (auto& b : img.pixels) b = static_cast<std::uint8_t>(rng());
  } else {
    auto* p = reinterpret_cast<std::uint16_t*>(img.pixels.data());
    for (std::size_t i = 0; i < img.pixels.size() / 2; ++i) p[i] = static_cast<std::uint16_t>(rng());
  }
  return img;
}

inline void write_bytes(const fs::path& path, const void* data, std::size_t n) {
  fs::create_directories(path.parent_path());
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(static_cast<const char*>(data), static_cast<std::streamsize>(n));
  ASSERT_TRUE(out.good()) << path;
}

inline void write_png(const fs::path& path, const io::Image& img, bool interlaced = false) {
  const auto data = io::encode_png(img, {.compression = 1, .interlaced = interlaced});
  write_bytes(path, data.data(), data.size());
}

inline void write_jpeg(const fs::path& path, const io::Image& img, int quality = 92) {
  const auto data = io::encode_jpeg(img, quality);
  write_bytes(path, data.data(), data.size());
}

// A 3 x 3 8-bit image from `seed`, for tests of names and plans, where the pixels do not matter.
inline void write_small_png(const fs::path& path, unsigned seed, int channels = 3) {
  write_png(path, random_image(3, 3, channels, 8, seed));
}
inline void write_small_jpeg(const fs::path& path, unsigned seed) {
  write_jpeg(path, random_image(3, 3, 3, 8, seed));
}

// A plan's options with its outputs under `out`.
inline PlanOptions plan_into(const fs::path& out) {
  PlanOptions o;
  o.output_dir = out;
  return o;
}

inline std::vector<std::uint8_t> read_bytes(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// What the tool must produce for an input file, computed independently of the engine: a
// gray image's values, a YCbCr JPEG's Y plane decoded alone (`jpeg_luma`, the tool's default),
// else the BT.601 luma of the decoded RGB.
inline io::Image expected_gray(const fs::path& input, bool jpeg_luma = true) {
  io::ImageReadOptions ro;
  ro.strip_16 = true;
  ro.jpeg_luma = jpeg_luma;
  const io::Image img = io::read_image(input, ro);
  io::Image gray = io::Image::make(img.width, img.height, 1, 8);
  if (img.channels <= 2) {
    const auto channels = static_cast<std::size_t>(img.channels);
    for (std::size_t i = 0; i < gray.pixels.size(); ++i) gray.pixels[i] = img.pixels[i * channels];
    return gray;
  }
  std::vector<std::uint8_t> rgb(rgb8_bytes(img));
  to_rgb8(img, rgb);
  ops::rgb_to_gray_host(rgb, gray.pixels);
  return gray;
}

// Every pixel equal (PNG output).
inline void expect_exact(const fs::path& input, const fs::path& output, bool jpeg_luma = true) {
  const io::Image want = expected_gray(input, jpeg_luma);
  const io::Image got = io::read_image(output);
  ASSERT_EQ(got.channels, 1) << output;
  ASSERT_EQ(got.bit_depth, 8) << output;
  ASSERT_EQ(got.width, want.width) << output;
  ASSERT_EQ(got.height, want.height) << output;
  for (std::size_t i = 0; i < want.pixels.size(); ++i)
    ASSERT_EQ(got.pixels[i], want.pixels[i]) << output << " pixel " << i;
}

// The six layouts a decoder hands over, 8 and 16 bits, plus an interlaced PNG and JPEGs
// (gray and colour). Returns the files written.
// `count` RGB 8-bit PNGs of w x h, dir/in/f<i>.png, image i from seed i.
inline std::vector<fs::path> write_random_pngs(const fs::path& dir, int count, std::uint32_t w, std::uint32_t h) {
  std::vector<fs::path> files;
  for (int i = 0; i < count; ++i) {
    files.push_back(dir / ("in/f" + std::to_string(i) + ".png"));
    write_png(files.back(), random_image(w, h, 3, 8, static_cast<unsigned>(i)));
  }
  return files;
}

inline std::vector<fs::path> write_every_variant(const fs::path& dir, std::uint32_t w = 37, std::uint32_t h = 23) {
  std::vector<fs::path> files;
  unsigned seed = 1;
  for (const int depth : {8, 16})
    for (const int channels : {1, 2, 3, 4}) {
      const auto path = dir / ("png-c" + std::to_string(channels) + "-d" + std::to_string(depth) + ".png");
      write_png(path, random_image(w, h, channels, depth, seed++));
      files.push_back(path);
    }
  files.push_back(dir / "png-interlaced.png");
  write_png(files.back(), random_image(w + 2, h + 4, 3, 8, seed++), true);
  files.push_back(dir / "jpeg-rgb.jpg");
  write_jpeg(files.back(), random_image(w, h, 3, 8, seed++));
  files.push_back(dir / "jpeg-gray.jpeg");
  write_jpeg(files.back(), random_image(w + 1, h, 1, 8, seed++));
  return files;
}

// One job per input file: OUT/<input name with the format's extension>.
inline std::vector<Job> jobs_for(const std::vector<fs::path>& files, const fs::path& out,
                                 io::ImageFormat format = io::ImageFormat::png) {
  std::vector<Job> jobs;
  for (const auto& p : files) {
    fs::path name = p.filename();
    name.replace_extension(output_extension(format));
    jobs.push_back({p, out / name});
  }
  return jobs;
}

// The message of the PlanError that `f` throws, or "(no error)".
inline std::string plan_error(const std::function<void()>& f) {
  try {
    f();
  } catch (const PlanError& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace streampipe::tools::gray::testing
