// SPDX-License-Identifier: Apache-2.0
// The gray tool on the GPU backend: every input variant through the device kernel gives the
// host reference exactly; bad files fail alone; several lanes and many files of odd sizes.

#include "test_gray_files.hpp"

#include "support/gpu.hpp"

#include "streampipe/tools/gray/convert.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <iostream>

namespace streampipe::tools::gray {
namespace {
using namespace testing;

Options gpu_options() {
  Options o;
  o.engine.backend = pipeline::Backend::gpu;
  o.engine.devices = {0};
  o.engine.host_threads = 4;
  o.engine.lanes = 3;
  o.decode = Decode::cpu;  // the host's decode and encode, so that outputs equal the reference exactly
  o.encode = Encode::cpu;
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

// The default set, the CPU and the GPU: the CPU converts files while the GPU starts, then
// the GPU joins and takes files too. Each file once, every output exact (the host's luma
// and the kernel's are the same bytes), each file naming where it ran.
TEST(GrayGpu, TheCpuConvertsWhileTheGpuStartsThenBothWork) {
  SP_REQUIRE_GPU();
  TempDir d;
  std::vector<fs::path> files;
  for (int i = 0; i < 300; ++i) {
    files.push_back(d / ("in/f" + std::to_string(i) + (i % 4 ? ".png" : ".jpg")));
    const auto img = random_image(static_cast<std::uint32_t>(600 + 7 * (i % 9)), 480, 3, 8, static_cast<unsigned>(i));
    if (i % 4) write_png(files.back(), img);
    else write_jpeg(files.back(), img);
  }
  Options o;
  o.engine.devices = {0};
  o.engine.host_threads = 1;  // a slow host: about 3 s of work, which the GPU's start repays
  o.engine.gpu_start_ms = 1;
  o.decode = Decode::cpu;
  o.encode = Encode::cpu;
  const auto jobs = jobs_for(files, d / "out");
  const RunSummary s = convert(jobs, o);
  ASSERT_EQ(s.ok, files.size());
  ASSERT_EQ(s.devices.size(), 2u);
  const DeviceShare& cpu = s.devices[0];
  const DeviceShare& gpu = s.devices[1];
  std::cout << "the CPU converted " << cpu.files << " files, GPU 0 " << gpu.files << " (joined after "
            << gpu.device.joined_ms << " ms, its start " << gpu.device.start_ms << " ms)\n";
  EXPECT_EQ(gpu.device.state, pipeline::DeviceReport::State::ready) << gpu.device.reason;
  EXPECT_GT(cpu.files, 0u);
  EXPECT_GT(gpu.files, 0u);
  EXPECT_EQ(cpu.files + gpu.files, files.size());
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    EXPECT_TRUE(s.files[i].device == 0 || s.files[i].device == pipeline::kCpuDevice) << i;
    expect_exact(jobs[i].input, jobs[i].output);
  }
}

// A run shorter than a GPU's start ends on the CPU, the GPU never started, and says so.
TEST(GrayGpu, AShortRunLeavesTheGpuUnstarted) {
  SP_REQUIRE_GPU();
  TempDir d;
  const std::vector<fs::path> files = write_random_pngs(d.path(), 50, 24, 16);
  Options o;
  o.engine.host_threads = 2;
  const auto jobs = jobs_for(files, d / "out");
  const RunSummary s = convert(jobs, o);
  ASSERT_EQ(s.ok, files.size());
  EXPECT_EQ(s.backend, "host");
  ASSERT_GE(s.devices.size(), 1u);
  EXPECT_EQ(s.devices[0].files, files.size());
  for (std::size_t m = 1; m < s.devices.size(); ++m)
    EXPECT_EQ(s.devices[m].device.state, pipeline::DeviceReport::State::not_started) << s.devices[m].device.name;
  for (const auto& j : jobs) expect_exact(j.input, j.output);
}

}  // namespace
}  // namespace streampipe::tools::gray
