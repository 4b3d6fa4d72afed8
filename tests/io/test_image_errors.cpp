// SPDX-License-Identifier: Apache-2.0
// Image I/O refusing what it cannot read: truncated and corrupt files, non-images, sizes that
// would not fit, each an ImageError naming the source; and files: no overwrite, no temp files
// left, format from content, missing paths named.

#include "streampipe/io/image.hpp"

#include "image_samples.hpp"

#include <gtest/gtest.h>

#include <cerrno>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace streampipe::io {
namespace {

namespace fs = std::filesystem;

// ---- bad input -------------------------------------------------------------------------

void expect_image_error(std::span<const std::byte> data, const std::string& fragment) {
  try {
    (void)decode_image(data, {}, "sample.bin");
    ADD_FAILURE() << "no exception; expected one mentioning '" << fragment << "'";
  } catch (const ImageError& e) {
    EXPECT_EQ(e.source(), "sample.bin");
    EXPECT_NE(std::string(e.what()).find("sample.bin"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
  }
}

TEST(ImageErrors, TruncatedPngAtEveryCut) {
  const auto full = encode_png(random_image(20, 20, 3, 8, 5));
  for (std::size_t cut = 8; cut < full.size(); cut += 7) {
    const std::span<const std::byte> part(full.data(), cut);
    EXPECT_THROW((void)decode_image(part, {}, "cut.png"), ImageError) << "cut at " << cut;
  }
}

TEST(ImageErrors, TruncatedJpegIsAnError) {
  const auto full = encode_jpeg(smooth_image(64, 64, 3), 90);
  expect_image_error(std::span<const std::byte>(full.data(), full.size() / 2), "truncated");
  for (std::size_t cut = 3; cut < full.size(); cut += full.size() / 13) {
    EXPECT_THROW((void)decode_image(std::span<const std::byte>(full.data(), cut), {}, "cut.jpg"), ImageError)
        << "cut at " << cut;
  }
}

TEST(ImageErrors, CorruptPngChecksum) {
  auto bytes = encode_png(random_image(16, 16, 1, 8, 9));
  bytes[20] ^= std::byte{0x5a};  // inside IHDR: CRC mismatch
  expect_image_error(bytes, "PNG");
}

TEST(ImageErrors, CorruptJpegHeader) {
  auto bytes = encode_jpeg(smooth_image(16, 16, 1), 90);
  // Overwrite everything after SOI with garbage marker bytes.
  for (std::size_t i = 3; i < std::min<std::size_t>(bytes.size(), 40); ++i) bytes[i] = std::byte{0x01};
  expect_image_error(bytes, "JPEG");
}

TEST(ImageErrors, NonImagesAndEmptyInput) {
  const std::string text = "hello, this is not an image\n";
  expect_image_error(std::as_bytes(std::span(text)), "not a PNG or JPEG");
  expect_image_error({}, "empty");
}

TEST(ImageErrors, HugeDeclaredSizeIsRefusedBeforeAllocating) {
  const auto bytes = encode_png(random_image(64, 64, 4, 16, 2));
  ImageReadOptions small;
  small.max_bytes = 1000;
  EXPECT_THROW((void)decode_image(bytes, small, "big.png"), ImageError);
}

// ---- files ------------------------------------------------------------------------------

class ImageFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("streampipe_image_" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

TEST_F(ImageFiles, WriteRefusesExistingAndLeavesNoTempFiles) {
  const Image img = random_image(9, 7, 3, 8, 3);
  const auto path = dir_ / "sub" / "out.png";
  write_image(path, img, ImageFormat::png);
  EXPECT_EQ(read_image(path).pixels, img.pixels);
  const Image other = random_image(9, 7, 3, 8, 4);
  EXPECT_THROW(write_image(path, other, ImageFormat::png), std::runtime_error);
  EXPECT_EQ(read_image(path).pixels, img.pixels);  // untouched
  write_image(path, other, ImageFormat::png, 90, Overwrite::allow);
  EXPECT_EQ(read_image(path).pixels, other.pixels);
  std::size_t entries = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir_ / "sub")) ++entries;
  EXPECT_EQ(entries, 1u);
}

TEST_F(ImageFiles, FormatComesFromContentNotExtension) {
  const Image img = random_image(8, 8, 1, 8, 1);
  const auto misnamed = dir_ / "really_png.jpg";
  write_image(misnamed, img, ImageFormat::png);
  EXPECT_EQ(read_image(misnamed).pixels, img.pixels);
  const auto jpeg = dir_ / "photo.png";
  write_image(jpeg, smooth_image(16, 16, 3), ImageFormat::jpeg, 95);
  EXPECT_EQ(read_image(jpeg).channels, 3);
}

TEST_F(ImageFiles, MissingFileAndDirectoryNameThePath) {
  try {
    (void)read_image(dir_ / "nope.png");
    ADD_FAILURE();
  } catch (const ImageError& e) {
    EXPECT_NE(std::string(e.what()).find("nope.png"), std::string::npos);
    EXPECT_EQ(e.error_number(), ENOENT);  // Python raises FileNotFoundError from it
  }
  try {
    (void)read_image(dir_);
    ADD_FAILURE();
  } catch (const ImageError& e) {
    EXPECT_EQ(e.error_number(), EISDIR);
  }
}

TEST(ImageFormatNames, ParseAndPrint) {
  EXPECT_EQ(parse_image_format("PNG"), ImageFormat::png);
  EXPECT_EQ(parse_image_format("jpg"), ImageFormat::jpeg);
  EXPECT_EQ(parse_image_format("Jpeg"), ImageFormat::jpeg);
  EXPECT_FALSE(parse_image_format("gif"));
  EXPECT_EQ(to_string(ImageFormat::png), "png");
}

}  // namespace
}  // namespace streampipe::io
