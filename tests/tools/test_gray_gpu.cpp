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

// With both codecs kept on the CPU, --backend auto runs on the CPU alone even where a GPU's
// start would pay for itself (a slow host, a start said to cost nothing): a GPU would only
// copy each file's luma through while the host's workers still decode and encode it, which
// was slower than the CPU alone (docs/gray.md). No GPU starts; every output exact.
TEST(GrayGpu, CodecsOnTheCpuRunOnTheCpuAlone) {
  SP_REQUIRE_GPU();
  TempDir d;
  std::vector<fs::path> files;
  for (int i = 0; i < 60; ++i) {
    files.push_back(d / ("in/f" + std::to_string(i) + (i % 4 ? ".png" : ".jpg")));
    const auto img = random_image(static_cast<std::uint32_t>(600 + 7 * (i % 9)), 480, 3, 8, static_cast<unsigned>(i));
    if (i % 4) write_png(files.back(), img);
    else write_jpeg(files.back(), img);
  }
  Options o;
  o.engine.devices = {0};
  o.engine.host_threads = 1;
  o.engine.gpu_start_ms = 1;
  o.decode = Decode::cpu;
  o.encode = Encode::cpu;
  const auto jobs = jobs_for(files, d / "out");
  const RunSummary s = convert(jobs, o);
  ASSERT_EQ(s.ok, files.size());
  EXPECT_EQ(s.backend, "host");
  EXPECT_EQ(s.decode, "cpu");
  ASSERT_GE(s.devices.size(), 1u);
  EXPECT_EQ(s.devices[0].files, files.size());
  for (std::size_t m = 1; m < s.devices.size(); ++m)
    EXPECT_EQ(s.devices[m].device.state, pipeline::DeviceReport::State::not_started) << s.devices[m].device.name;
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    EXPECT_EQ(s.files[i].device, pipeline::kCpuDevice) << i;
    expect_exact(jobs[i].input, jobs[i].output);
  }
}

}  // namespace
}  // namespace streampipe::tools::gray
