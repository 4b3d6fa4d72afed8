// SPDX-License-Identifier: Apache-2.0
// --decode: names, the build's nvJPEG flag, which files nvJPEG is given (and why not), and the
// options convert() refuses before any work.

#include "gpu_order.hpp"
#include "io/jpeg_variants.hpp"
#include "test_gray_files.hpp"

#include "streampipe/tools/gray/convert.hpp"
#include "streampipe/tools/gray/decode.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <stdexcept>
#include <sys/stat.h>

namespace streampipe::tools::gray {
namespace {
using io::testing::baseline_jpeg;

TEST(GrayDecode, Names) {
  EXPECT_EQ(parse_decode("cpu"), Decode::cpu);
  EXPECT_EQ(parse_decode("gpu"), Decode::gpu);
  EXPECT_FALSE(parse_decode("GPU").has_value());
  EXPECT_FALSE(parse_decode("").has_value());
  EXPECT_STREQ(to_string(Decode::cpu), "cpu");
  EXPECT_STREQ(to_string(Decode::gpu), "gpu");
#if defined(STREAMPIPE_HAVE_NVJPEG)
  EXPECT_TRUE(gpu_decode_available());
#else
  EXPECT_FALSE(gpu_decode_available());
#endif
}

TEST(GrayDecode, NvjpegGetsBaselineAndExtendedJpegs) {
  const auto rgb = baseline_jpeg(99, 61, 3, 1);
  EXPECT_EQ(gpu_decode_refusal(rgb), std::nullopt);
  EXPECT_EQ(gpu_decode_refusal(baseline_jpeg(17, 5, 1, 2)), std::nullopt);
  EXPECT_EQ(gpu_decode_refusal(io::testing::with_sof(rgb, 0xC1)), std::nullopt);
  EXPECT_EQ(gpu_decode_refusal(io::testing::with_sof(rgb, 0xC2)), "progressive JPEG");
  EXPECT_EQ(gpu_decode_refusal(io::testing::with_adobe(rgb, 1)), std::nullopt);  // YCbCr, as JFIF
  EXPECT_EQ(gpu_decode_refusal(io::testing::with_rgb_ids(rgb)), std::nullopt);   // JFIF says YCbCr
  EXPECT_EQ(gpu_decode_refusal(io::testing::without_jfif(rgb)), std::nullopt);   // ids 1, 2, 3
}

TEST(GrayDecode, OtherFilesGoToTheCpuDecoderWithTheirReason) {
  const auto rgb = baseline_jpeg(99, 61, 3, 3);
  const auto png = io::encode_png(io::Image::make(5, 4, 3, 8));
  EXPECT_EQ(gpu_decode_refusal(png), "PNG file");
  const std::vector<std::byte> text = {std::byte{'h'}, std::byte{'i'}, std::byte{'!'}, std::byte{'\n'}};
  EXPECT_EQ(gpu_decode_refusal(text), "not a JPEG file");
  EXPECT_EQ(gpu_decode_refusal(io::testing::with_sof(rgb, 0xC3)), "lossless JPEG");
  EXPECT_EQ(gpu_decode_refusal(io::testing::with_sof(rgb, 0xC9)), "arithmetic-coded JPEG");
  EXPECT_EQ(gpu_decode_refusal(io::testing::with_sof(rgb, 0xC6)), "hierarchical JPEG");
  EXPECT_EQ(gpu_decode_refusal(io::testing::with_precision(rgb, 12)), "12-bit JPEG");
  EXPECT_EQ(gpu_decode_refusal(io::testing::with_adobe(rgb, 0)), "RGB JPEG (Adobe marker, no colour transform)");
  EXPECT_EQ(gpu_decode_refusal(io::testing::with_rgb_ids(io::testing::without_jfif(rgb))),
            "RGB JPEG (components named R, G, B)");
  EXPECT_EQ(gpu_decode_refusal(io::testing::truncated(rgb)), "incomplete JPEG (no end-of-image marker)");
  EXPECT_EQ(gpu_decode_refusal(std::span(rgb).first(40)), "unreadable JPEG markers");
}

TEST(GrayDecode, AFilesFirstBytesSayWhetherNvjpegMayDecodeIt) {
  const auto rgb = baseline_jpeg(99, 61, 3, 4);
  EXPECT_TRUE(gpu_may_decode(rgb));
  EXPECT_TRUE(gpu_may_decode(std::span(rgb).first(rgb.size() / 2)));  // its end not seen yet
  EXPECT_FALSE(gpu_may_decode(io::testing::with_sof(rgb, 0xC2)));     // progressive
  EXPECT_FALSE(gpu_may_decode(io::encode_png(io::Image::make(5, 4, 3, 8))));
  EXPECT_FALSE(gpu_may_decode(std::span(rgb).first(40)));  // no frame header yet
}

// The run's order with GPU decoding: what nvJPEG will not take first, then what it may, each
// kind in job order; files that cannot be read (missing, a FIFO, not an image) count as the
// first kind and are never read whole (nor waited on).
TEST(GrayDecode, FilesNvjpegMayDecodeGoLast) {
  testing::TempDir d;
  const auto put = [&](const char* name, std::span<const std::byte> bytes) {
    std::ofstream(d / name, std::ios::binary).write(reinterpret_cast<const char*>(bytes.data()),
                                                    static_cast<std::streamsize>(bytes.size()));
  };
  const auto rgb = baseline_jpeg(64, 48, 3, 5);
  put("0-baseline.jpg", rgb);
  put("1-progressive.jpg", io::testing::with_sof(baseline_jpeg(200, 160, 3, 7), 0xC2));  // larger: not counted
  put("2-baseline-gray.jpg", baseline_jpeg(33, 17, 1, 6));
  put("3.png", io::encode_png(io::Image::make(5, 4, 1, 8)));
  const std::vector<std::byte> text = {std::byte{'h'}, std::byte{'i'}};
  put("4.txt", text);
  ASSERT_EQ(::mkfifo((d / "5.fifo").c_str(), 0600), 0);
  put("7-baseline-tall.jpg", baseline_jpeg(20, 90, 3, 8));
  std::vector<Job> jobs;
  for (const char* name : {"0-baseline.jpg", "1-progressive.jpg", "2-baseline-gray.jpg", "3.png", "4.txt", "5.fifo",
                           "6-missing.jpg", "7-baseline-tall.jpg"})
    jobs.push_back({d / name, d / "out" / name});
  const detail::GpuOrder g = detail::order_for_gpu_decoding(jobs, 3);
  EXPECT_EQ(g.order, (std::vector<std::size_t>{1, 3, 4, 5, 6, 0, 2, 7}));
  EXPECT_EQ(g.gpu_from, 5u);
  // The JPEG engines' buffers are reserved for the widest and the tallest baseline file.
  EXPECT_EQ(g.largest_width, 64u);
  EXPECT_EQ(g.largest_height, 90u);
}

TEST(GrayDecode, ConvertRefusesGpuDecodingWhereItCannotRun) {
  testing::TempDir d;
  testing::write_jpeg(d / "a.jpg", testing::random_image(9, 7, 3, 8, 1));
  const std::vector<Job> jobs = {{d / "a.jpg", d / "out/a.png"}};
  Options o;
  o.decode = Decode::gpu;
  o.engine.backend = pipeline::Backend::host;
  o.engine.host_threads = 2;
  EXPECT_THROW((void)convert(jobs, o), std::invalid_argument);
  EXPECT_FALSE(std::filesystem::exists(d / "out/a.png"));
  o.decode = Decode::cpu;
  o.encode = Encode::gpu;  // PNG output encoded on the GPU: refused alike
  EXPECT_THROW((void)convert(jobs, o), std::invalid_argument);
  EXPECT_FALSE(std::filesystem::exists(d / "out/a.png"));
}

}  // namespace
}  // namespace streampipe::tools::gray
