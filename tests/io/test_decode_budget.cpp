// SPDX-License-Identifier: Apache-2.0
// Decoded bytes shared by the threads decoding at once (issue 36, class 15), and what
// read_image reads (classes 12, 16, 23): its kind and its first bytes before the rest.

#include "streampipe/io/decode_budget.hpp"
#include "streampipe/io/image.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <sys/resource.h>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>
#include <vector>

namespace streampipe::io {
namespace {

namespace fs = std::filesystem;

std::vector<std::byte> png_of(std::uint32_t w, std::uint32_t h, int channels, int depth) {
  Image img = Image::make(w, h, channels, depth);
  for (std::size_t i = 0; i < img.pixels.size(); ++i) img.pixels[i] = static_cast<std::uint8_t>(i * 31);
  return encode_png(img, {.compression = 1});
}

TEST(DecodeBudget, ThreadsTogetherNeverHoldMoreThanTheBudget) {
  const auto png = png_of(200, 100, 4, 16);  // 160,000 bytes decoded
  ImageReadOptions o;
  o.limits.budget = std::make_shared<DecodeBudget>(400000, "a test's budget");  // two at once
  std::atomic<int> decoded{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([&] {
      for (int k = 0; k < 10; ++k) {
        const Image img = decode_image(png, o, "p.png");
        EXPECT_EQ(img.size_bytes(), 160000u);
        std::this_thread::sleep_for(std::chrono::milliseconds(1));  // held a while, as while converting it
        ++decoded;
      }
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(decoded.load(), 80);
  EXPECT_EQ(o.limits.budget->held(), 0u) << "every image gave its share back";
  EXPECT_LE(o.limits.budget->peak(), 400000u);
  EXPECT_EQ(o.limits.budget->peak(), 320000u) << "two held at once";
}

TEST(DecodeBudget, AnImageLargerThanTheWholeBudgetFailsAloneNamed) {
  ImageReadOptions o;
  o.limits.budget = std::make_shared<DecodeBudget>(100000, "--max-memory-mib 1");
  try {
    (void)decode_image(png_of(200, 100, 4, 16), o, "big.png");
    ADD_FAILURE() << "decoded past its budget";
  } catch (const ImageError& e) {
    const std::string what = e.what();
    EXPECT_EQ(what.rfind("big.png: decodes to", 0), 0u) << what;
    EXPECT_NE(what.find("(160000 bytes), more than"), std::string::npos) << what;
    EXPECT_NE(what.find("--max-memory-mib 1"), std::string::npos) << what;
  }
  EXPECT_EQ(o.limits.budget->held(), 0u);
  // A copy of an image holds the same share; the last one gives it back.
  o.limits.budget = std::make_shared<DecodeBudget>(1000000, "x");
  Image a = decode_image(png_of(200, 100, 4, 16), o, "a.png");
  {
    const Image b = a;
    a = Image{};
    EXPECT_EQ(o.limits.budget->held(), 160000u);
  }
  EXPECT_EQ(o.limits.budget->held(), 0u);
}

TEST(DecodeBudget, HeadersGiveTheDecodedLayout) {
  const auto h = read_image_header(png_of(7, 5, 2, 16));
  ASSERT_TRUE(h);
  EXPECT_EQ(h->format, ImageFormat::png);
  EXPECT_EQ(h->width, 7u);
  EXPECT_EQ(h->height, 5u);
  EXPECT_EQ(h->channels, 2);
  EXPECT_EQ(h->bit_depth, 16);
  Image gray = Image::make(9, 4, 1);
  const auto j = read_image_header(encode_jpeg(gray, 80));
  ASSERT_TRUE(j);
  EXPECT_EQ(j->format, ImageFormat::jpeg);
  EXPECT_EQ(j->channels, 1);
  EXPECT_EQ(j->width, 9u);
  const std::string text = "not an image";
  EXPECT_FALSE(read_image_header(std::as_bytes(std::span(text.data(), text.size()))));
}

class ReadImage : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("sp-read-image-" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  static std::string refusal(const fs::path& p) {
    try {
      (void)read_image(p);
    } catch (const ImageError& e) {
      return e.what();
    }
    return "(read)";
  }
  fs::path dir_;
};

// A FIFO would block until a writer came, /dev/zero read forever ("empty file", it said).
TEST_F(ReadImage, RefusesFilesThatAreNotRegularByTheirKind) {
  ASSERT_EQ(::mkfifo((dir_ / "x.png").c_str(), 0600), 0);
  EXPECT_EQ(refusal(dir_ / "x.png"), (dir_ / "x.png").string() + ": is a FIFO, not a regular file");
  EXPECT_EQ(refusal("/dev/zero"), "/dev/zero: is a character device, not a regular file");
  EXPECT_NE(refusal(dir_).find("is a folder"), std::string::npos);
  EXPECT_NE(refusal(dir_ / "absent.png").find("cannot open: No such file"), std::string::npos);
}

// Its first bytes before the rest: 1.5 GB of garbage costs a few bytes of reading.
TEST_F(ReadImage, GarbageIsRefusedFromItsFirstBytes) {
  const fs::path p = dir_ / "garbage.png";
  { std::ofstream(p, std::ios::binary) << "garbage"; }
  fs::resize_file(p, std::uintmax_t{3} << 29);  // sparse
  rusage before{}, after{};
  ::getrusage(RUSAGE_SELF, &before);
  EXPECT_NE(refusal(p).find("not a PNG or JPEG file"), std::string::npos);
  ::getrusage(RUSAGE_SELF, &after);
  EXPECT_LT(after.ru_maxrss - before.ru_maxrss, 256 * 1024) << "KiB: the file was read whole";
  { std::ofstream(p, std::ios::binary | std::ios::trunc); }
  EXPECT_EQ(refusal(p), p.string() + ": empty file");
}

}  // namespace
}  // namespace streampipe::io
