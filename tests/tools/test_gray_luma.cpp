// SPDX-License-Identifier: Apache-2.0
// gray's luma-only JPEG decoding on the host backend: whole runs over JPEGs of every coding
// choice (written here with libjpeg-turbo) and PNGs, with Options::jpeg_luma (the default) and
// without it (every file to RGB, then its luma, as before it existed): outputs within a level
// of each other, each exactly its own reference; which files took which path, in the
// summary and the JSON; and the staging of every pixel layout.

#include "io/jpeg_recipes.hpp"
#include "test_gray_files.hpp"

#include "streampipe/tools/gray/convert.hpp"
#include "streampipe/tools/gray/report.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <iostream>
#include <map>

namespace streampipe::tools::gray {
namespace {
using namespace testing;

struct Input {
  fs::path path;
  std::string decoded_to;  // what the run with jpeg_luma must report
  int channels = 0;        // the file's layout
};

// Every JPEG coding at odd sizes, an RGB PNG and a gray one.
std::vector<Input> write_luma_set(const fs::path& dir) {
  std::vector<Input> inputs;
  const std::pair<std::uint32_t, std::uint32_t> sizes[] = {{1, 1}, {17, 9}, {333, 211}, {64, 47}};
  unsigned seed = 1;
  for (const auto& recipe : io::testing::every_jpeg_recipe())
    for (const auto& [w, h] : sizes) {
      const auto jpeg = io::testing::write_jpeg_recipe(io::testing::in_gamut_photo(w, h, seed++), recipe);
      Input in;
      in.path = dir / (recipe.name + "-" + std::to_string(w) + "x" + std::to_string(h) + ".jpg");
      write_bytes(in.path, jpeg.data(), jpeg.size());
      const bool luma = recipe.written == JCS_YCbCr || recipe.written == JCS_GRAYSCALE;
      in.decoded_to = luma ? "luma" : "rgb";
      in.channels = recipe.written == JCS_GRAYSCALE ? 1 : 3;
      inputs.push_back(std::move(in));
    }
  inputs.push_back({dir / "rgb.png", "rgb", 3});
  write_png(inputs.back().path, io::testing::in_gamut_photo(45, 31, seed++));
  inputs.push_back({dir / "gray.png", "luma", 1});
  write_png(inputs.back().path, random_image(29, 13, 1, 8, seed++));
  return inputs;
}

Options host_run(bool jpeg_luma) {
  Options o;
  o.engine.backend = pipeline::Backend::host;
  o.engine.host_threads = 2;
  o.engine.lanes = 2;
  o.jpeg_luma = jpeg_luma;
  return o;
}

// Gray layouts are staged as their luma, one byte a pixel, giving exactly the bytes the luma
// of their RGB gives; colour layouts as RGB.
TEST(GrayPixels, GrayLayoutsAreStagedAsTheLumaOfTheirRgb) {
  for (const int depth : {8, 16})
    for (const int channels : {1, 2, 3, 4}) {
      SCOPED_TRACE(std::to_string(channels) + " channel(s), " + std::to_string(depth) + "-bit");
      const io::Image img = random_image(19, 5, channels, depth, static_cast<unsigned>(channels + depth));
      const bool gray = channels <= 2;
      EXPECT_EQ(staged_as(img), gray ? Staged::luma : Staged::rgb);
      EXPECT_EQ(staged_bytes(img), 19u * 5u * (gray ? 1u : 3u));
      std::vector<std::uint8_t> rgb(rgb8_bytes(img)), luma(19u * 5u);
      to_rgb8(img, rgb);
      ops::rgb_to_gray_host(rgb, luma);
      EXPECT_EQ(gray8(img), luma);
      std::vector<std::uint8_t> staged(staged_bytes(img));
      stage(img, staged);
      EXPECT_EQ(staged, gray ? luma : rgb);
      staged.push_back(0);
      EXPECT_THROW(stage(img, staged), std::invalid_argument);
    }
}

TEST(GrayLuma, WholeRunsWithinALevelOfTheRgbPath) {
  TempDir d;
  const auto inputs = write_luma_set(d / "in");
  std::vector<fs::path> files;
  for (const auto& in : inputs) files.push_back(in.path);
  const auto luma_jobs = jobs_for(files, d / "out-luma");
  const auto rgb_jobs = jobs_for(files, d / "out-rgb");
  const RunSummary luma = convert(luma_jobs, host_run(true));
  const RunSummary rgb = convert(rgb_jobs, host_run(false));
  ASSERT_EQ(luma.ok, files.size());
  ASSERT_EQ(rgb.ok, files.size());

  std::map<std::string, std::size_t> want_counts;
  int worst = 0;
  std::size_t differing = 0;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    const auto& in = inputs[i];
    SCOPED_TRACE(in.path.filename().string());
    EXPECT_EQ(luma.files[i].decoded_to, in.decoded_to);
    EXPECT_EQ(rgb.files[i].decoded_to, in.channels == 1 ? "luma" : "rgb");
    EXPECT_EQ(luma.files[i].channels, in.channels) << "the file's layout, however it was decoded";
    EXPECT_EQ(rgb.files[i].channels, in.channels);
    ++want_counts[in.decoded_to];
    expect_exact(in.path, luma_jobs[i].output, true);
    expect_exact(in.path, rgb_jobs[i].output, false);
    const io::Image a = io::read_image(luma_jobs[i].output);
    const io::Image b = io::read_image(rgb_jobs[i].output);
    ASSERT_EQ(a.pixels.size(), b.pixels.size());
    for (std::size_t p = 0; p < a.pixels.size(); ++p) {
      const int diff = std::abs(int{a.pixels[p]} - int{b.pixels[p]});
      worst = std::max(worst, diff);
      differing += diff != 0 ? 1 : 0;
    }
    if (in.decoded_to == "rgb") {
      EXPECT_EQ(a.pixels, b.pixels) << "the RGB path is the same either way";
    }
  }
  std::cout << "gray with luma-only decoding vs without, " << inputs.size() << " files: max " << worst
            << " level(s), " << differing << " pixel(s) differ\n";
  EXPECT_LE(worst, 1);
  EXPECT_EQ(luma.decoded_to, want_counts);

  const auto json = run_json(luma, true);
  EXPECT_EQ(json.at("decoded_to").at("luma").get<std::size_t>(), want_counts["luma"]);
  EXPECT_EQ(json.at("decoded_to").at("rgb").get<std::size_t>(), want_counts["rgb"]);
  for (std::size_t i = 0; i < inputs.size(); ++i)
    EXPECT_EQ(json.at("file_results").at(i).at("decoded_to").get<std::string>(), inputs[i].decoded_to);
}

}  // namespace
}  // namespace streampipe::tools::gray
