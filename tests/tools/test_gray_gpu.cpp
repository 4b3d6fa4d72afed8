// SPDX-License-Identifier: Apache-2.0
// The gray tool on the GPU backend: every input variant through the device kernel gives the
// host reference exactly; bad files fail alone; several lanes and many files of odd sizes.

#include "test_gray_files.hpp"

#include "support/gpu.hpp"

#include "streampipe/tools/gray.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <iostream>

namespace streampipe::tools::gray {
namespace {
using namespace testing;

Options gpu_options() {
  Options o;
  o.backend = pipeline::Backend::gpu;
  o.devices = {0};
  o.threads = 4;
  o.lanes = 3;
  o.decode = Decode::cpu;  // the host's decode and encode, so that outputs equal the reference exactly
  o.encode = Encode::cpu;
  o.host_start = false;    // every file through the kernel
  return o;
}

TEST(GrayGpu, EveryVariantMatchesTheHostReference) {
  SP_REQUIRE_GPU();
  TempDir d;
  auto files = write_every_variant(d / "in");
  // A large odd-sized image as well, so the kernel runs many blocks with a ragged tail.
  files.push_back(d / "in/large.png");
  write_png(files.back(), random_image(1921, 1079, 3, 8, 77));
  const auto jobs = jobs_for(files, d / "out");
  const RunSummary s = convert(jobs, gpu_options());
  EXPECT_EQ(s.backend, "gpu");
  ASSERT_EQ(s.ok, files.size());
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    ASSERT_TRUE(s.files[i].ok) << s.files[i].error;
    expect_exact(jobs[i].input, jobs[i].output);
  }
  const TimeSplit t = split_time(s.records, s.wall_ms);
  EXPECT_GT(t.device_busy_ms, 0);
  EXPECT_GT(t.compute_ms, 0);
}

TEST(GrayGpu, BadFilesFailAloneAndTheDeviceKeepsWorking) {
  SP_REQUIRE_GPU();
  TempDir d;
  std::vector<fs::path> files;
  for (int i = 0; i < 24; ++i) {
    files.push_back(d / ("in/f" + std::to_string(i) + ".png"));
    if (i % 5 == 2) {
      write_bytes(files.back(), "not an image", 12);
    } else {
      write_png(files.back(), random_image(static_cast<std::uint32_t>(3 + i * 29), static_cast<std::uint32_t>(1 + i * 3),
                                           i % 2 ? 3 : 4, 8, static_cast<unsigned>(i)));
    }
  }
  const auto jobs = jobs_for(files, d / "out");
  const auto s = convert(jobs, gpu_options());
  EXPECT_EQ(s.failed, 5u);
  EXPECT_EQ(s.ok, 19u);
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    if (i % 5 == 2) {
      EXPECT_FALSE(s.files[i].ok);
      EXPECT_EQ(s.files[i].error.rfind(jobs[i].input.string() + ": ", 0), 0u) << s.files[i].error;
    } else {
      ASSERT_TRUE(s.files[i].ok) << s.files[i].error;
      expect_exact(jobs[i].input, jobs[i].output);
    }
  }
}

// Host threads convert files while the GPU engine starts, then the engine takes the rest:
// each file once, every output exact (the host's luma and the kernel's are the same bytes).
TEST(GrayGpu, HostStartHandsTheRestToTheGpu) {
  SP_REQUIRE_GPU();
  TempDir d;
  std::vector<fs::path> files;
  for (int i = 0; i < 48; ++i) {
    files.push_back(d / ("in/f" + std::to_string(i) + (i % 4 ? ".png" : ".jpg")));
    const auto img = random_image(static_cast<std::uint32_t>(300 + 7 * i), 211, 3, 8, static_cast<unsigned>(i));
    if (i % 4) write_png(files.back(), img);
    else write_jpeg(files.back(), img);
  }
  Options o = gpu_options();
  o.host_start = true;
  const auto jobs = jobs_for(files, d / "out");
  const RunSummary s = convert(jobs, o);
  EXPECT_EQ(s.backend, "gpu");
  EXPECT_TRUE(s.host_start);
  ASSERT_EQ(s.ok, files.size());
  const auto marked = static_cast<std::size_t>(
      std::count_if(s.files.begin(), s.files.end(), [](const FileResult& f) { return f.host_start; }));
  EXPECT_EQ(marked, s.host_start_files);
  EXPECT_LE(s.setup_ms, s.engine_ready_ms);
  std::cout << s.host_start_files << " of " << files.size() << " files converted on host threads; the engine was ready "
            << s.engine_ready_ms << " ms after the call\n";
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    EXPECT_EQ(s.items[i].device, s.files[i].host_start ? -1 : 0) << i;
    expect_exact(jobs[i].input, jobs[i].output);
  }
}

// Backend::automatic: once the host threads have taken every file, the GPU's start stops at
// its next step and the run ends on the host, saying so. One thread and 100 small files (the
// least for which auto starts the GPU) are taken in milliseconds; CUDA's start takes longer.
TEST(GrayGpu, AutomaticStopsTheGpuStartWhenTheHostTookEveryFile) {
  SP_REQUIRE_GPU();
  TempDir d;
  const std::vector<fs::path> files = write_random_pngs(d.path(), 100, 24, 16);
  Options o;
  o.threads = 1;
  const auto jobs = jobs_for(files, d / "out");
  const RunSummary s = convert(jobs, o);
  ASSERT_EQ(s.ok, files.size());
  EXPECT_EQ(s.host_start_files, files.size());
  EXPECT_EQ(s.backend, "host");
  EXPECT_NE(s.backend_note.find("before the GPU was ready: its start was stopped"), std::string::npos)
      << s.backend_note;
  for (const auto& j : jobs) expect_exact(j.input, j.output);
}

}  // namespace
}  // namespace streampipe::tools::gray
