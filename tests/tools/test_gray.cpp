// SPDX-License-Identifier: Apache-2.0
// The gray tool's library on the host backend: pixel layouts to RGB, planning (name
// mirroring, recursion, collisions, existing outputs), and whole runs over files of every
// variant with outputs compared pixel by pixel, failures named, --force.

#include "test_gray_files.hpp"

#include "streampipe/tools/gray/convert.hpp"
#include "streampipe/tools/gray/plan.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <mutex>
#include <set>

namespace streampipe::tools::gray {
namespace {
using namespace testing;

std::uint8_t round16(std::uint16_t v) { return static_cast<std::uint8_t>(std::lround(v * 255.0 / 65535.0)); }

TEST(GrayPixels, EveryLayoutBecomesRgb8) {
  for (const int depth : {8, 16})
    for (const int channels : {1, 2, 3, 4}) {
      const io::Image img = random_image(13, 7, channels, depth, static_cast<unsigned>(channels * 10 + depth));
      std::vector<std::uint8_t> rgb(rgb8_bytes(img), 0xAB);
      ASSERT_EQ(rgb.size(), 13u * 7u * 3u);
      to_rgb8(img, rgb);
      for (std::size_t p = 0; p < 13u * 7u; ++p) {
        for (int c = 0; c < 3; ++c) {
          const std::size_t src = p * static_cast<std::size_t>(channels) + static_cast<std::size_t>(channels <= 2 ? 0 : c);
          const std::uint8_t want =
              depth == 8 ? img.pixels[src] : round16(reinterpret_cast<const std::uint16_t*>(img.pixels.data())[src]);
          ASSERT_EQ(rgb[p * 3 + static_cast<std::size_t>(c)], want) << channels << "ch " << depth << "bit pixel " << p;
        }
      }
    }
}

TEST(GrayPixels, SixteenBitRoundingAtTheEnds) {
  io::Image img = io::Image::make(4, 1, 1, 16);
  const std::uint16_t v[4] = {0, 128, 65535, 32896};  // 128 * 255 / 65535 = 0.498 -> 0; 32896 -> 128
  std::memcpy(img.pixels.data(), v, sizeof v);
  std::vector<std::uint8_t> rgb(12);
  to_rgb8(img, rgb);
  EXPECT_EQ(rgb[0], 0);
  EXPECT_EQ(rgb[3], 0);
  EXPECT_EQ(rgb[6], 255);
  EXPECT_EQ(rgb[9], 128);
}

TEST(GrayPixels, GrayThroughLumaIsTheIdentity) {
  for (int v = 0; v < 256; ++v) {
    const auto b = static_cast<std::uint8_t>(v);
    ASSERT_EQ(ops::luma_bt601(b, b, b), b);
  }
}

TEST(GrayPixels, WrongSpanSizeIsRejected) {
  const io::Image img = random_image(5, 5, 3, 8, 1);
  std::vector<std::uint8_t> rgb(74);
  EXPECT_THROW(to_rgb8(img, rgb), std::invalid_argument);
}

TEST(GrayTime, SplitSumsStagesAndUnitesDeviceIntervals) {
  using pipeline::Stage;
  const std::vector<pipeline::StageRecord> records = {
      {Stage::stage_in, -1, 0, 1, 0, 10, 0},   {Stage::stage_in, -1, 1, 1, 5, 12, 0},
      {Stage::h2d, 0, 0, 1, 10, 11, 0},        {Stage::compute, 0, 0, 1, 11, 13, 0},
      {Stage::d2h, 0, 0, 1, 13, 14, 0},        {Stage::h2d, 1, 1, 1, 12, 13, 0},  // overlaps lane 0
      {Stage::compute, 1, 1, 1, 20, 21, 0},    {Stage::stage_out, -1, 0, 1, 14, 18, 0},
      {Stage::queue, -1, 0, 1, 0, 100, 0}};
  const TimeSplit t = split_time(records, 40);
  EXPECT_DOUBLE_EQ(t.decode_ms, 17);
  EXPECT_DOUBLE_EQ(t.decode_busy_ms, 12);
  EXPECT_DOUBLE_EQ(t.h2d_ms, 2);
  EXPECT_DOUBLE_EQ(t.compute_ms, 3);
  EXPECT_DOUBLE_EQ(t.d2h_ms, 1);
  EXPECT_DOUBLE_EQ(t.encode_ms, 4);
  EXPECT_DOUBLE_EQ(t.encode_busy_ms, 4);
  EXPECT_DOUBLE_EQ(t.device_busy_ms, 5);  // [10, 14] and [20, 21]
  EXPECT_DOUBLE_EQ(t.device_share(), 5.0 / 40);
  EXPECT_EQ(split_time({}, 0).device_share(), 0);
}

// ---- planning --------------------------------------------------------------------------

std::vector<fs::path> outputs_of(const std::vector<Job>& jobs) {
  std::vector<fs::path> v;
  for (const auto& j : jobs) v.push_back(j.output);
  return v;
}

TEST(GrayPlan, FilesAndFoldersMirrorTheirNames) {
  TempDir d;
  write_small_png(d / "in/a.png", 1);
  write_small_jpeg(d / "in/b.JPEG", 2);
  write_small_png(d / "in/sub/c.png", 3);
  write_bytes(d / "in/notes.txt", "hello", 5);
  write_small_png(d / "single/photo.jpg", 4);  // a PNG named .jpg

  PlanOptions o = plan_into(d / "out");
  const std::vector<fs::path> inputs = {d / "in", d / "single/photo.jpg"};
  auto jobs = plan_jobs(inputs, o);
  EXPECT_EQ(outputs_of(jobs), (std::vector<fs::path>{d / "out/a.png", d / "out/b.png", d / "out/photo.png"}));
  EXPECT_EQ(jobs[1].input, d / "in/b.JPEG");

  o.recursive = true;
  o.format = io::ImageFormat::jpeg;
  jobs = plan_jobs(std::span(inputs.data(), 1), o);
  EXPECT_EQ(outputs_of(jobs), (std::vector<fs::path>{d / "out/a.jpg", d / "out/b.jpg", d / "out/sub/c.jpg"}));
}

TEST(GrayPlan, RecursionSkipsTheOutputFolder) {
  TempDir d;
  write_small_png(d / "a.png", 1);
  write_small_png(d / "gray/old.png", 2, 1);
  PlanOptions o = plan_into(d / "gray");
  o.recursive = true;
  const std::vector<fs::path> inputs = {d.path()};
  const auto jobs = plan_jobs(inputs, o);
  ASSERT_EQ(jobs.size(), 1u);
  EXPECT_EQ(jobs[0].output, d / "gray/a.png");
}

TEST(GrayPlan, BadUsageIsRefusedBeforeAnyWork) {
  TempDir d;
  write_small_png(d / "x/a.png", 1);
  write_small_jpeg(d / "x/a.jpg", 2);
  write_small_png(d / "y/a.png", 3);
  fs::create_directories(d / "empty");
  PlanOptions o = plan_into(d / "out");

  std::vector<fs::path> in = {d / "missing.png"};
  EXPECT_NE(plan_error([&] { (void)plan_jobs(in, o); }).find("missing.png: no such file"), std::string::npos);
  in = {d / "x"};
  EXPECT_NE(plan_error([&] { (void)plan_jobs(in, o); }).find("would both be written to"), std::string::npos);
  in = {d / "x/a.png", d / "y/a.png"};
  EXPECT_NE(plan_error([&] { (void)plan_jobs(in, o); }).find("would both be written to"), std::string::npos);
  in = {d / "empty"};
  EXPECT_NE(plan_error([&] { (void)plan_jobs(in, o); }).find("no *.png"), std::string::npos);
  in = {};
  EXPECT_NE(plan_error([&] { (void)plan_jobs(in, o); }).find("no input"), std::string::npos);
  // Writing next to the input with the same name would destroy it, even with force.
  in = {d / "y/a.png"};
  PlanOptions same = o;
  same.output_dir = d / "y";
  same.force = true;
  EXPECT_NE(plan_error([&] { (void)plan_jobs(in, same); }).find("would replace the input"), std::string::npos);
  // An output folder that is a file.
  same.output_dir = d / "x/a.png";
  EXPECT_NE(plan_error([&] { (void)plan_jobs(in, same); }).find("not a folder"), std::string::npos);
}

TEST(GrayPlan, ExistingOutputsNeedForce) {
  TempDir d;
  write_small_png(d / "a.png", 1);
  write_bytes(d / "out/a.png", "old", 3);
  PlanOptions o = plan_into(d / "out");
  const std::vector<fs::path> in = {d / "a.png"};
  const std::string e = plan_error([&] { (void)plan_jobs(in, o); });
  EXPECT_NE(e.find("exist already"), std::string::npos) << e;
  EXPECT_NE(e.find("--force"), std::string::npos) << e;
  o.force = true;
  EXPECT_EQ(plan_jobs(in, o).size(), 1u);
}

// With -r, an output folder inside the scanned tree is left out of the scan; its original
// images must not become outputs to replace (issue 36, class 1). Earlier gray outputs there
// (8-bit gray) may be replaced, so that a run can be repeated.
TEST(GrayPlan, AnOutputFolderInsideTheScannedTreeSparesItsOriginals) {
  TempDir d;
  write_small_png(d / "a.png", 1);
  write_small_png(d / "b.png", 2);
  write_small_png(d / "gray/a.png", 3, 1);  // an earlier output
  write_png(d / "gray/b.png", random_image(5, 5, 3, 8, 4));  // an original that was there
  PlanOptions o = plan_into(d / "gray");
  o.recursive = true;
  o.force = true;
  const std::vector<fs::path> in = {d.path()};
  const std::string e = plan_error([&] { (void)plan_jobs(in, o); });
  EXPECT_NE(e.find((d / "gray/b.png").string()), std::string::npos) << e;
  EXPECT_NE(e.find("a 8-bit RGB image, not an earlier gray output"), std::string::npos) << e;
  o.force = false;
  EXPECT_NE(plan_error([&] { (void)plan_jobs(in, o); }).find("not an earlier gray output"), std::string::npos);
  fs::remove(d / "gray/b.png");
  o.force = true;
  EXPECT_EQ(plan_jobs(in, o).size(), 2u) << "an earlier gray output is replaced with force";
}

// ---- whole runs on the host backend ----------------------------------------------------

Options host_options() {
  Options o;
  o.engine.backend = pipeline::Backend::host;
  o.engine.host_threads = 3;
  o.engine.lanes = 2;
  return o;
}

TEST(GrayRun, EveryVariantMatchesTheReferenceExactly) {
  TempDir d;
  const auto files = write_every_variant(d / "in");
  const auto jobs = jobs_for(files, d / "out");
  std::mutex m;
  std::set<fs::path> reported;
  std::size_t last = 0;
  Options o = host_options();
  o.on_file = [&](const FileResult& f, std::size_t finished) {
    std::lock_guard lock(m);
    reported.insert(f.input);
    last = std::max(last, finished);
  };
  const RunSummary s = convert(jobs, o);
  EXPECT_EQ(s.backend, "host");
  EXPECT_EQ(s.ok, files.size());
  EXPECT_EQ(s.failed, 0u);
  EXPECT_EQ(reported.size(), files.size());
  EXPECT_EQ(last, files.size());
  std::uint64_t in_bytes = 0, pixels = 0;
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    ASSERT_TRUE(s.files[i].ok) << s.files[i].error;
    EXPECT_EQ(s.files[i].bytes_out, fs::file_size(jobs[i].output));
    in_bytes += fs::file_size(jobs[i].input);
    pixels += std::uint64_t{s.files[i].width} * s.files[i].height;
    expect_exact(jobs[i].input, jobs[i].output);
  }
  EXPECT_EQ(s.bytes_in, in_bytes);
  EXPECT_EQ(s.pixels, pixels);
  EXPECT_EQ(s.files[1].channels, 2);
  EXPECT_EQ(s.files[5].bit_depth, 16);
  // Every stage was recorded, and the split adds up.
  const TimeSplit t = split_time(s.records, s.wall_ms);
  EXPECT_GT(t.decode_ms, 0);
  EXPECT_GT(t.encode_ms, 0);
  EXPECT_GT(t.device_busy_ms, 0);
  EXPECT_LE(t.device_busy_ms, t.h2d_ms + t.compute_ms + t.d2h_ms + 1e-9);
  EXPECT_LE(t.device_share(), 1.0 + 1e-9);
}

TEST(GrayRun, GrayInputComesOutIdentical) {
  TempDir d;
  const io::Image g = random_image(41, 17, 1, 8, 9);
  write_png(d / "g.png", g);
  const std::vector<Job> jobs = {{d / "g.png", d / "out/g.png"}};
  const auto s = convert(jobs, host_options());
  ASSERT_EQ(s.ok, 1u) << s.files[0].error;
  EXPECT_EQ(io::read_image(d / "out/g.png").pixels, g.pixels);
}

// The defaults with GPUs named (--devices 0) but neither codec on a GPU run on the CPU alone,
// on any machine: the GPUs named are not used, and naming them is no error.
TEST(GrayRun, TheDefaultsWithGpusNamedRunOnTheCpu) {
  TempDir d;
  const io::Image img = random_image(37, 23, 3, 8, 5);
  write_png(d / "c.png", img);
  const std::vector<Job> jobs = {{d / "c.png", d / "out/c.png"}};
  Options o;
  o.engine.devices = {0};
  o.engine.host_threads = 2;
  const auto s = convert(jobs, o);
  ASSERT_EQ(s.ok, 1u) << s.files[0].error;
  EXPECT_EQ(s.backend, "host");
  EXPECT_EQ(s.files[0].device, pipeline::kCpuDevice);
  expect_exact(d / "c.png", d / "out/c.png");
}

TEST(GrayRun, JpegOutputIsWithinJpegTolerance) {
  TempDir d;
  // Smooth content, as JPEG is meant for: a gradient with mild noise.
  io::Image img = io::Image::make(203, 101, 3, 8);
  std::mt19937 rng(3);
  for (std::uint32_t y = 0; y < img.height; ++y)
    for (std::uint32_t x = 0; x < img.width; ++x)
      for (int c = 0; c < 3; ++c)
        img.pixels[(y * img.width + x) * 3 + static_cast<std::uint32_t>(c)] =
            static_cast<std::uint8_t>(std::clamp<int>(static_cast<int>(x + y * static_cast<std::uint32_t>(c)) / 2 + static_cast<int>(rng() % 7), 0, 255));
  write_png(d / "smooth.png", img);
  Options o = host_options();
  o.format = io::ImageFormat::jpeg;
  o.jpeg_quality = 95;
  const std::vector<Job> jobs = {{d / "smooth.png", d / "out/smooth.jpg"}};
  const auto s = convert(jobs, o);
  ASSERT_EQ(s.ok, 1u) << s.files[0].error;
  const auto bytes = read_bytes(d / "out/smooth.jpg");
  ASSERT_GE(bytes.size(), 3u);
  EXPECT_EQ(bytes[0], 0xFF);
  EXPECT_EQ(bytes[1], 0xD8);
  const io::Image got = io::read_image(d / "out/smooth.jpg");
  const io::Image want = expected_gray(d / "smooth.png");
  ASSERT_EQ(got.channels, 1);
  ASSERT_EQ(got.pixels.size(), want.pixels.size());
  double sum = 0;
  int worst = 0;
  for (std::size_t i = 0; i < want.pixels.size(); ++i) {
    const int diff = std::abs(int{got.pixels[i]} - int{want.pixels[i]});
    sum += diff;
    worst = std::max(worst, diff);
  }
  EXPECT_LT(sum / static_cast<double>(want.pixels.size()), 2.0);
  EXPECT_LE(worst, 16);
}

TEST(GrayRun, BadFilesAreNamedAndTheOthersFinish) {
  TempDir d;
  const auto good = write_every_variant(d / "in", 19, 11);
  // Corrupt (random bytes behind a PNG signature), truncated PNG and JPEG, not an image, empty.
  std::vector<std::uint8_t> corrupt = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
  std::mt19937 rng(5);
  for (int i = 0; i < 200; ++i) corrupt.push_back(static_cast<std::uint8_t>(rng()));
  write_bytes(d / "in/corrupt.png", corrupt.data(), corrupt.size());
  const auto png = io::encode_png(random_image(50, 40, 3, 8, 6));
  write_bytes(d / "in/truncated.png", png.data(), png.size() / 2);
  const auto jpg = io::encode_jpeg(random_image(50, 40, 3, 8, 7), 90);
  write_bytes(d / "in/truncated.jpg", jpg.data(), jpg.size() * 2 / 3);
  write_bytes(d / "in/notes.png", "just some text, not an image\n", 29);
  write_bytes(d / "in/empty.jpg", "", 0);
  const std::vector<std::string> bad = {"corrupt.png", "truncated.png", "truncated.jpg", "notes.png", "empty.jpg"};

  std::vector<fs::path> files;
  for (std::size_t i = 0; i < good.size(); ++i) {  // bad files between the good ones
    files.push_back(good[i]);
    if (i < bad.size()) files.push_back(d / "in" / bad[i]);
  }
  auto jobs = jobs_for(files, d / "out");
  // One more failure at the write: the output exists (and must stay untouched).
  write_bytes(d / "out/png-c3-d8.png", "old", 3);
  const auto s = convert(jobs, host_options());
  EXPECT_EQ(s.ok, good.size() - 1);
  EXPECT_EQ(s.failed, bad.size() + 1);
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    const auto& f = s.files[i];
    const std::string name = jobs[i].input.filename().string();
    const bool is_bad = std::find(bad.begin(), bad.end(), name) != bad.end();
    if (is_bad) {
      EXPECT_FALSE(f.ok) << name;
      EXPECT_EQ(f.error.rfind(jobs[i].input.string() + ": ", 0), 0u) << f.error;
      EXPECT_GT(f.error.size(), jobs[i].input.string().size() + 4) << "a reason follows the name: " << f.error;
      EXPECT_FALSE(fs::exists(jobs[i].output)) << name;
    } else if (name == "png-c3-d8.png") {
      EXPECT_FALSE(f.ok);
      EXPECT_NE(f.error.find("png-c3-d8.png"), std::string::npos) << f.error;
      EXPECT_EQ(read_bytes(jobs[i].output), (std::vector<std::uint8_t>{'o', 'l', 'd'}));
    } else {
      ASSERT_TRUE(f.ok) << f.error;
      expect_exact(jobs[i].input, jobs[i].output);
    }
  }
  // No temporary files are left behind by the refused write.
  std::size_t outputs = 0;
  for (const auto& e : fs::directory_iterator(d / "out")) {
    (void)e;
    ++outputs;
  }
  EXPECT_EQ(outputs, good.size());
}

TEST(GrayRun, ForceReplacesExistingOutputs) {
  TempDir d;
  write_png(d / "a.png", random_image(9, 5, 3, 8, 1));
  write_bytes(d / "out/a.png", "old", 3);
  const std::vector<Job> jobs = {{d / "a.png", d / "out/a.png"}};
  Options o = host_options();
  EXPECT_EQ(convert(jobs, o).failed, 1u);
  o.force = true;
  const auto s = convert(jobs, o);
  ASSERT_EQ(s.ok, 1u) << s.files[0].error;
  expect_exact(d / "a.png", d / "out/a.png");
}

TEST(GrayRun, ManyFilesWithFewSlotsAndOddThreadCounts) {
  TempDir d;
  std::vector<fs::path> files;
  for (int i = 0; i < 40; ++i) {
    files.push_back(d / ("in/f" + std::to_string(i) + (i % 3 ? ".png" : ".jpg")));
    const auto img = random_image(static_cast<std::uint32_t>(1 + i * 7), static_cast<std::uint32_t>(1 + i % 9), 3, 8,
                                  static_cast<unsigned>(i));
    if (i % 3) write_png(files.back(), img);
    else write_jpeg(files.back(), img);
  }
  Options o = host_options();
  o.engine.host_threads = 5;
  o.engine.lanes = 1;
  const auto jobs = jobs_for(files, d / "out");
  const auto s = convert(jobs, o);
  ASSERT_EQ(s.ok, files.size());
  for (const auto& j : jobs) expect_exact(j.input, j.output);
}

TEST(GrayRun, BadOptionsAreRejected) {
  const std::vector<Job> none;
  Options o = host_options();
  o.jpeg_quality = 0;
  EXPECT_THROW((void)convert(none, o), std::invalid_argument);
  o = host_options();
  o.png_compression = 10;
  EXPECT_THROW((void)convert(none, o), std::invalid_argument);
  o = host_options();
  o.engine.host_threads = -1;
  EXPECT_THROW((void)convert(none, o), std::invalid_argument);
  o = host_options();
  o.encode = Encode::gpu;  // the GPU writes PNG at compression 1 only, whatever the devices
  o.png_compression = 6;
  EXPECT_THROW((void)convert(none, o), std::invalid_argument);
}

}  // namespace
}  // namespace streampipe::tools::gray
