// SPDX-License-Identifier: Apache-2.0
// gray on the engine's device set, without a GPU: the CPU's lanes beside simulated GPUs,
// every file converted once and exactly as the host backend converts it, each file and
// member saying where the work ran; a short run of known length keeping the GPUs unstarted;
// the items numbered one per file; the summary's line per member.

#include "test_gray_files.hpp"

#include "streampipe/tools/gray/report.hpp"
#include "streampipe/tools/gray/text.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>

namespace streampipe::tools::gray {
namespace {
using namespace testing;

std::vector<fs::path> mixed_inputs(const TempDir& d, int n) {
  std::vector<fs::path> files;
  for (int i = 0; i < n; ++i) {
    files.push_back(d / ("in/f" + std::to_string(i) + (i % 2 ? ".png" : ".jpg")));
    const auto img = random_image(static_cast<std::uint32_t>(40 + i), 31, 3, 8, static_cast<unsigned>(i));
    if (i % 2) write_png(files.back(), img);
    else write_jpeg(files.back(), img);
  }
  return files;
}

TEST(GrayDevices, TheCpuAndSimulatedGpusConvertEveryFileOnceAsTheHostDoes) {
  TempDir d;
  const auto files = mixed_inputs(d, 40);
  Options o;
  o.engine.backend = pipeline::Backend::automatic;
  o.engine.simulate_gpus = true;
  o.engine.devices = {0, 1};
  o.engine.host_threads = 3;
  o.engine.gpu_start_ms = 1e-6;  // start the GPUs whatever the run's length
  std::size_t reports = 0;
  o.on_file = [&](const FileResult&, std::size_t) { ++reports; };  // one call at a time
  const auto jobs = jobs_for(files, d / "out");
  const RunSummary s = convert(jobs, o);
  ASSERT_EQ(s.ok, files.size());
  EXPECT_EQ(reports, files.size());
  for (const auto& j : jobs) expect_exact(j.input, j.output);
  // One item per file (no nvJPEG in a simulated run), numbered 0..n-1.
  std::set<std::size_t> indices;
  for (const auto& item : s.items) indices.insert(item.index);
  EXPECT_EQ(indices.size(), files.size());
  // Every member is reported, the CPU first; the shares add up to the files. The GPUs start
  // one after another, each judged at its turn: the second may find the run taken already.
  ASSERT_EQ(s.devices.size(), 3u);
  EXPECT_EQ(s.devices[0].device.device, pipeline::kCpuDevice);
  std::size_t total = 0;
  double shares = 0;
  for (const auto& m : s.devices) {
    total += m.files;
    shares += m.share;
    if (m.device.device == 1 && m.device.state == pipeline::DeviceReport::State::not_started) {
      EXPECT_NE(m.device.reason.find("sooner than a GPU pays for itself"), std::string::npos) << m.device.reason;
      EXPECT_EQ(m.files, 0u);
      continue;
    }
    EXPECT_EQ(m.device.state, pipeline::DeviceReport::State::ready) << m.device.name << ": " << m.device.reason;
    EXPECT_GE(m.device.joined_ms, 0.0) << m.device.name;
  }
  EXPECT_EQ(total, files.size());
  EXPECT_NEAR(shares, 1.0, 1e-9);
  std::map<int, std::size_t> per_file_device;
  for (const auto& f : s.files) ++per_file_device[f.device];
  for (const auto& m : s.devices) EXPECT_EQ(per_file_device[m.device.device], m.files) << m.device.name;
  EXPECT_EQ(s.cpu_lanes, 2);  // a quarter of 3 workers, at least 2
}

TEST(GrayDevices, AShortRunEndsOnTheCpuWithoutStartingAGpu) {
  TempDir d;
  const std::vector<fs::path> files = write_random_pngs(d.path(), 5, 33, 17);
  Options o;
  o.engine.simulate_gpus = true;
  o.engine.devices = {0};
  o.engine.host_threads = 2;
  const RunSummary s = convert(jobs_for(files, d / "out"), o);
  ASSERT_EQ(s.ok, files.size());
  EXPECT_EQ(s.backend, "host");
  ASSERT_EQ(s.devices.size(), 2u);
  EXPECT_EQ(s.devices[0].files, files.size());
  EXPECT_EQ(s.devices[1].device.state, pipeline::DeviceReport::State::not_started);
  EXPECT_NE(s.devices[1].device.reason.find("sooner than a GPU pays for itself"), std::string::npos) << s.devices[1].device.reason;
}

TEST(GrayDevices, TheHostBackendHasTheCpuAlone) {
  TempDir d;
  const auto files = mixed_inputs(d, 6);
  Options o;
  o.engine.backend = pipeline::Backend::host;
  o.engine.host_threads = 2;
  const RunSummary s = convert(jobs_for(files, d / "out"), o);
  ASSERT_EQ(s.ok, files.size());
  ASSERT_EQ(s.devices.size(), 1u);
  EXPECT_EQ(s.devices[0].files, files.size());
  EXPECT_EQ(s.backend, "host");
  EXPECT_EQ(s.decode, "cpu");
  for (const auto& f : s.files) EXPECT_EQ(f.device, pipeline::kCpuDevice);
}

TEST(GrayDevices, GpuDecodingOnTheHostBackendIsRefused) {
  Options o;
  o.engine.backend = pipeline::Backend::host;
  o.decode = Decode::gpu;
  EXPECT_THROW((void)convert({}, o), std::invalid_argument);
}

// The summary's line per member: what each did, or why it did nothing, a GPU whose start
// had not ended with the run said to be still starting, not merely "starting".
TEST(GrayDevices, EachMemberHasALineSayingWhatItDidOrWhyNot) {
  RunSummary s;
  const auto member = [&](int device, pipeline::DeviceReport::State state, std::size_t files, std::string reason) {
    DeviceShare m;
    m.device.device = device;
    m.device.name = device == pipeline::kCpuDevice ? "CPU" : "GPU " + std::to_string(device);
    m.device.state = state;
    m.device.reason = std::move(reason);
    m.device.joined_ms = state == pipeline::DeviceReport::State::ready ? 1500 : -1;
    m.device.start_ms = 1400;
    m.files = files;
    m.share = static_cast<double>(files) / 100;
    m.images_per_s = 50;
    s.devices.push_back(m);
  };
  member(pipeline::kCpuDevice, pipeline::DeviceReport::State::ready, 60, "");
  member(0, pipeline::DeviceReport::State::ready, 40, "");
  member(1, pipeline::DeviceReport::State::starting, 0, "");
  member(2, pipeline::DeviceReport::State::not_started, 0, "the CPU finishes the run sooner");
  const auto lines = device_lines(s);
  ASSERT_EQ(lines.size(), 4u);
  EXPECT_EQ(lines[0], "CPU: 60 file(s), 60% of the work, 50.0 images/s");
  EXPECT_EQ(lines[1], "GPU 0: 40 file(s), 40% of the work, 50.0 images/s; joined 1.50 s after the start (its own start 1.40 s)");
  EXPECT_EQ(lines[2], "GPU 1: still starting when the run ended, so it took no file");
  EXPECT_EQ(lines[3], "GPU 2: not started: the CPU finishes the run sooner");
}

// A run that could have used a GPU and ran on the CPU alone says why on its one line: the
// first GPU's state and the gist of its reason, or why the GPUs were never looked for; -v
// has the figures.
TEST(GrayDevices, TheSummaryLineSaysWhyNoGpuTookPart) {
  RunSummary s;
  s.ok = 2;
  s.backend = "host";
  s.device = "host";
  const CommandTime t{.convert_ms = 10};
  const RunText run{.files = 2, .gpu_wanted = true};
  const std::string rule = "the CPU finishes the run sooner than a GPU pays for itself: 0.01 s of work left";
  s.gpus_left_out = rule;
  EXPECT_NE(summary_line(s, t, run).find(
                "on the CPU (no GPU started: the CPU finishes the run sooner than a GPU pays for itself)\n"),
            std::string::npos)
      << summary_line(s, t, run);
  EXPECT_NE(device_lines(s).back().find("the GPUs: not started: " + rule), std::string::npos);
  DeviceShare gpu;
  gpu.device.device = 0;
  gpu.device.name = "GPU 0";
  gpu.device.state = pipeline::DeviceReport::State::not_started;
  gpu.device.reason = rule;
  s.gpus_left_out.clear();
  s.devices.push_back(gpu);
  EXPECT_NE(summary_line(s, t, run).find(
                "on the CPU (GPU 0 not started: the CPU finishes the run sooner than a GPU pays for itself)\n"),
            std::string::npos)
      << summary_line(s, t, run);
  s.devices.back().device.state = pipeline::DeviceReport::State::starting;
  EXPECT_NE(summary_line(s, t, run).find("on the CPU (GPU 0 was still starting when the run ended)"), std::string::npos);
  // Where no GPU was wanted (--backend host), nothing is said.
  EXPECT_NE(summary_line(s, t, RunText{.files = 2}).find("on the CPU\n"), std::string::npos);
}

}  // namespace
}  // namespace streampipe::tools::gray
