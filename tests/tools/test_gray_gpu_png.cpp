// SPDX-License-Identifier: Apache-2.0
// --format png --encode gpu (built with nvJPEG, whose lanes the encoder runs on): each file
// byte for byte the one the host's encoder writes from the same run's gray image, whether
// the host or nvJPEG decoded the input, with groups of every size; the summary names the
// encoder. (Other compression levels are refused: test_gray.cpp, on the CPU.)

#include "support/gpu.hpp"
#include "test_gray_files.hpp"

#include "streampipe/tools/gray/convert.hpp"
#include "streampipe/tools/gray/synthetic.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace streampipe::tools::gray {
namespace {
using namespace testing;

std::vector<fs::path> inputs(const TempDir& d) {
  std::vector<fs::path> files;
  const std::pair<std::uint32_t, std::uint32_t> sizes[] = {{1920, 1080}, {641, 479}, {17, 9}, {1, 1},
                                                           {2049, 1537}, {99, 1001}, {1280, 720}};
  std::uint32_t seed = 60;
  for (const auto& [w, h] : sizes) {
    files.push_back(d / ("in/photo-" + std::to_string(seed) + ".jpg"));
    write_jpeg(files.back(), photo_like(w, h, seed++), 90);
  }
  files.push_back(d / "in/noise.png");
  write_png(files.back(), random_image(777, 555, 1, 8, 6));
  files.push_back(d / "in/flat.png");
  write_png(files.back(), io::Image::make(3000, 2000, 3, 8));  // all zero: runs only
  return files;
}

Options gpu_options(Decode decode, Encode encode) {
  Options o;
  o.engine.backend = pipeline::Backend::gpu;
  o.engine.devices = {0};
  o.engine.host_threads = 3;
  o.engine.lanes = 2;
  o.decode = decode;
  o.encode = encode;
  return o;
}

void expect_same_files(const std::vector<Job>& want, const std::vector<Job>& got) {
  ASSERT_EQ(want.size(), got.size());
  for (std::size_t i = 0; i < want.size(); ++i)
    EXPECT_TRUE(read_bytes(want[i].output) == read_bytes(got[i].output)) << got[i].output;
}

TEST(GrayGpuPng, GpuEncodedPngsAreTheHostsFiles) {
  SP_REQUIRE_GPU();
  TempDir d;
  const std::vector<fs::path> files = inputs(d);
  // Both decoders: nvJPEG's luma may differ from libjpeg-turbo's, each run is compared with
  // the host's encoding of its own decode.
  for (const Decode decode : {Decode::cpu, Decode::gpu}) {
    const std::string tag = decode == Decode::cpu ? "cpu" : "gpu";
    Options host = gpu_options(decode, Encode::cpu);
    host.group = 4;
    const auto host_jobs = jobs_for(files, d / ("host-" + tag));
    const RunSummary h = convert(host_jobs, host);
    ASSERT_EQ(h.ok, files.size());
    EXPECT_EQ(h.encode, "cpu");
    EXPECT_EQ(h.encoder, "");
    for (const int group : {1, 3, 16}) {
      Options o = gpu_options(decode, Encode::gpu);
      o.group = group;
      const auto jobs = jobs_for(files, d / ("gpu-" + tag + "-" + std::to_string(group)));
      const RunSummary s = convert(jobs, o);
      ASSERT_EQ(s.ok, files.size()) << "group " << group;
      EXPECT_EQ(s.encode, "gpu");
      EXPECT_EQ(s.encoder, "GPU PNG encoder");
      EXPECT_NE(s.codecs.find("GPU PNG encoder"), std::string::npos) << s.codecs;
      expect_same_files(host_jobs, jobs);
      if (decode == Decode::cpu)
        for (const Job& j : jobs) expect_exact(j.input, j.output);
    }
  }
}

}  // namespace
}  // namespace streampipe::tools::gray
