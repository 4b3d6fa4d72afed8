// SPDX-License-Identifier: Apache-2.0
// --format png --encode gpu (built with nvJPEG, whose lanes the encoder runs on): each file
// byte for byte the one the host's encoder writes for the same gray image, whether the host
// or nvJPEG decoded the input, with groups of 1, 3 and 16; the summary names the encoder.
// (Other compression levels are refused: test_gray.cpp, on the CPU.)

#include "support/gpu.hpp"
#include "test_gray_files.hpp"

#include "streampipe/tools/gray/convert.hpp"
#include "streampipe/tools/gray/synthetic.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>

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

// Each output is the file the host's encoder writes for the gray image it holds.
void expect_host_encoding(const std::vector<Job>& jobs) {
  for (const Job& j : jobs) {
    const std::vector<std::uint8_t> file = read_bytes(j.output);
    const std::vector<std::byte> host = io::encode_png(io::read_image(j.output), {.compression = 1});
    const auto same = [](std::uint8_t a, std::byte b) { return a == std::to_integer<std::uint8_t>(b); };
    EXPECT_TRUE(std::equal(file.begin(), file.end(), host.begin(), host.end(), same)) << j.output;
  }
}

TEST(GrayGpuPng, GpuEncodedPngsAreTheHostsFiles) {
  SP_REQUIRE_GPU();
  TempDir d;
  const std::vector<fs::path> files = inputs(d);
  // Decoded on the host, the gray images are known: the outputs are the --encode cpu run's
  // files byte for byte. nvJPEG's routing (JPEG engines or its general backend) may depend
  // on the group, so with it each output is checked against the host's encoding of its own
  // pixels.
  Options host = gpu_options(Decode::cpu, Encode::cpu);
  host.group = 4;
  const auto host_jobs = jobs_for(files, d / "host");
  const RunSummary h = convert(host_jobs, host);
  ASSERT_EQ(h.ok, files.size());
  EXPECT_EQ(h.encode, "cpu");
  EXPECT_EQ(h.encoder, "");
  for (const Decode decode : {Decode::cpu, Decode::gpu})
    for (const int group : {1, 3, 16}) {
      Options o = gpu_options(decode, Encode::gpu);
      o.group = group;
      const std::string tag = (decode == Decode::cpu ? "cpu-" : "gpu-") + std::to_string(group);
      const auto jobs = jobs_for(files, d / tag);
      const RunSummary s = convert(jobs, o);
      ASSERT_EQ(s.ok, files.size()) << tag;
      EXPECT_EQ(s.encode, "gpu") << tag;
      EXPECT_EQ(s.encoder, "GPU PNG encoder") << tag;
      EXPECT_NE(s.codecs.find("GPU PNG encoder"), std::string::npos) << s.codecs;
      expect_host_encoding(jobs);
      if (decode == Decode::cpu)
        for (std::size_t i = 0; i < jobs.size(); ++i) {
          EXPECT_TRUE(read_bytes(host_jobs[i].output) == read_bytes(jobs[i].output)) << jobs[i].output;
          expect_exact(jobs[i].input, jobs[i].output);
        }
    }
}

}  // namespace
}  // namespace streampipe::tools::gray
